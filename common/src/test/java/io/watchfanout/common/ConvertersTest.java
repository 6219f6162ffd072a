package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

class ConvertersTest {

  @Test
  void parsesDurations() {
    assertThat(DurationConverter.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(DurationConverter.parse("5s")).isEqualTo(Duration.ofSeconds(5));
    assertThat(DurationConverter.parse("10m")).isEqualTo(Duration.ofMinutes(10));
    assertThat(DurationConverter.parse("7d")).isEqualTo(Duration.ofDays(7));
    assertThat(DurationConverter.parse("PT3S")).isEqualTo(Duration.ofSeconds(3));
    assertThatThrownBy(() -> DurationConverter.parse("5 parsecs"))
        .isInstanceOf(TypeConversionException.class).hasMessageContaining("'5 parsecs'");
    assertThatThrownBy(() -> DurationConverter.parse("-5s")).isInstanceOf(TypeConversionException.class);
  }

  @Test
  void parsesByteSizes() {
    assertThat(ByteSizeConverter.parse("1024")).isEqualTo(1024);
    assertThat(ByteSizeConverter.parse("8MiB")).isEqualTo(8 << 20);
    assertThat(ByteSizeConverter.parse("1g")).isEqualTo(1 << 30);
    assertThatThrownBy(() -> ByteSizeConverter.parse("4GiB")).isInstanceOf(TypeConversionException.class);
    assertThatThrownBy(() -> ByteSizeConverter.parse("lots")).isInstanceOf(TypeConversionException.class);
  }

  @Test
  void percentEncodesKeys() {
    assertThat(KeyBytes.decode("/registry/pods%00")).containsExactly(
        '/', 'r', 'e', 'g', 'i', 's', 't', 'r', 'y', '/', 'p', 'o', 'd', 's', 0);
    assertThat(KeyBytes.encode(new byte[] {'a', 0, (byte) 0xff, '%'})).isEqualTo("a%00%ff%25");
    assertThat(KeyBytes.decode(KeyBytes.encode(new byte[] {1, 2, 'x', (byte) 0x80})))
        .containsExactly(1, 2, 'x', (byte) 0x80);
    assertThatThrownBy(() -> KeyBytes.decode("abc%4")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("position 3");
    assertThatThrownBy(() -> KeyBytes.decode("%zz")).isInstanceOf(IllegalArgumentException.class);
  }

  @Command(name = "demo")
  static final class Demo {
    @Option(names = "--kafka-bootstrap", defaultValue = "127.0.0.1:9092")
    String kafkaBootstrap;

    @Option(names = "--bookmark-interval", defaultValue = "5s", converter = DurationConverter.class)
    Duration bookmarkInterval;
  }

  @Test
  void environmentOverridesDefaultsAndFlagsOverrideEnvironment() {
    Demo demo = new Demo();
    new CommandLine(demo)
        .setDefaultValueProvider(new EnvironmentDefaults(Map.of(
            "WATCHFANOUT_KAFKA_BOOTSTRAP", "10.0.0.1:9092", "WATCHFANOUT_BOOKMARK_INTERVAL", "1s")))
        .parseArgs("--bookmark-interval", "2s");
    assertThat(demo.kafkaBootstrap).isEqualTo("10.0.0.1:9092");
    assertThat(demo.bookmarkInterval).isEqualTo(Duration.ofSeconds(2));
    assertThat(EnvironmentDefaults.variableFor("--topic-prefix")).isEqualTo("WATCHFANOUT_TOPIC_PREFIX");
  }
}

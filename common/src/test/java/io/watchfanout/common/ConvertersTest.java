package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
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
        assertThat(DurationConverter.parse("0")).isEqualTo(Duration.ZERO);
        assertThatThrownBy(() -> DurationConverter.parse("5")).isInstanceOf(TypeConversionException.class);
        assertThatThrownBy(() -> DurationConverter.parse("5 parsecs"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("'5 parsecs'");
        assertThatThrownBy(() -> DurationConverter.parse("-5s")).isInstanceOf(TypeConversionException.class);
    }

    @Test
    void parsesWholeNumbersAndSaysWhatWasExpected() {
        IntegerConverter c = new IntegerConverter();
        assertThat(c.convert("8081")).isEqualTo(8081);
        assertThat(c.convert(" -3 ")).isEqualTo(-3);
        for (String bad : new String[] {"abc", "80.5", "99999999999", ""}) {
            assertThatThrownBy(() -> c.convert(bad))
                    .as(bad)
                    .isInstanceOf(TypeConversionException.class)
                    .hasMessage(
                            "'" + bad + "' is not a whole number (expected: digits, e.g. 8081, at most 2147483647)");
        }
    }

    @Test
    void checksKafkaBootstrapLists() {
        assertThat(KafkaBootstrapConverter.parse("127.0.0.1:9092")).isEqualTo("127.0.0.1:9092");
        assertThat(KafkaBootstrapConverter.parse(" kafka-0.kafka:9092,[::1]:9093 "))
                .isEqualTo("kafka-0.kafka:9092,[::1]:9093");
        for (String bad :
                new String[] {"nohost", "host:", ":9092", "host:0", "host:65536", "a:1,,b:2", "", "h:9092/x"}) {
            assertThatThrownBy(() -> KafkaBootstrapConverter.parse(bad))
                    .as(bad)
                    .isInstanceOf(picocli.CommandLine.TypeConversionException.class)
                    .hasMessageContaining("host:port");
        }
    }

    @Test
    void parsesByteSizes() {
        assertThat(ByteSizeConverter.parse("1024")).isEqualTo(1024);
        assertThat(ByteSizeConverter.parse("8MiB")).isEqualTo(8 << 20);
        assertThat(ByteSizeConverter.parse("512KiB")).isEqualTo(512 << 10);
        assertThat(ByteSizeConverter.parse("1GiB")).isEqualTo(1 << 30);
        assertThat(ByteSizeConverter.parse("64Mi")).isEqualTo(64 << 20);
        assertThat(ByteSizeConverter.parse("2Ki")).isEqualTo(2048);
        assertThatThrownBy(() -> ByteSizeConverter.parse("4GiB")).isInstanceOf(TypeConversionException.class);
        assertThatThrownBy(() -> ByteSizeConverter.parse("lots")).isInstanceOf(TypeConversionException.class);
    }

    @Test
    void refusesSizeUnitsThatAreNotDocumented() {
        for (String undocumented :
                List.of("64MB", "64mb", "64M", "64m", "1g", "1k", "64mib", "64B", "64 MiB", "64iB")) {
            assertThatThrownBy(() -> ByteSizeConverter.parse(undocumented))
                    .as(undocumented)
                    .isInstanceOf(TypeConversionException.class)
                    .hasMessageContaining("'" + undocumented + "'")
                    .hasMessageContaining("KiB, MiB or GiB");
        }
        assertThatThrownBy(() -> ByteSizeConverter.parse("64MB"))
                .hasMessageContaining("64MB could mean powers of 1000 or of 1024: write 64MiB");
    }

    @Test
    void parsesEtcdEndpointsAsEtcdctlDoes() {
        assertThat(EtcdEndpointConverter.parse("127.0.0.1:2379")).isEqualTo("http://127.0.0.1:2379");
        assertThat(EtcdEndpointConverter.parse("etcd-0.etcd:2379")).isEqualTo("http://etcd-0.etcd:2379");
        assertThat(EtcdEndpointConverter.parse("[::1]:2379")).isEqualTo("http://[::1]:2379");
        assertThat(EtcdEndpointConverter.parse("http://127.0.0.1:2379")).isEqualTo("http://127.0.0.1:2379");
        assertThat(EtcdEndpointConverter.parse("https://etcd:2379/")).isEqualTo("https://etcd:2379");
        for (String bad : List.of(
                "",
                "127.0.0.1",
                "http://127.0.0.1",
                "ftp://etcd:2379",
                "etcd:http",
                "etcd:0",
                "http://etcd:2379/v3",
                "a b:2379",
                "etcd:99999")) {
            assertThatThrownBy(() -> EtcdEndpointConverter.parse(bad))
                    .as(bad)
                    .isInstanceOf(TypeConversionException.class)
                    .hasMessageContaining(
                            "'" + bad + "' is not an etcd endpoint (expected: host:port, http://host:port");
        }
    }

    @Test
    void formatsDurationsTheWayTheFlagsTakeThem() {
        assertThat(DurationConverter.format(Duration.ZERO)).isEqualTo("0s");
        assertThat(DurationConverter.format(Duration.ofMillis(500))).isEqualTo("500ms");
        assertThat(DurationConverter.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(DurationConverter.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(DurationConverter.format(Duration.ofMinutes(10))).isEqualTo("10m");
        assertThat(DurationConverter.format(Duration.ofHours(2))).isEqualTo("2h");
        assertThat(DurationConverter.format(Duration.ofDays(7))).isEqualTo("7d");
        for (String text : List.of("0s", "500ms", "5s", "10m", "2h", "7d")) {
            assertThat(DurationConverter.format(DurationConverter.parse(text))).isEqualTo(text);
        }
    }

    @Test
    void percentEncodesKeys() {
        assertThat(KeyBytes.decode("/registry/pods%00"))
                .containsExactly('/', 'r', 'e', 'g', 'i', 's', 't', 'r', 'y', '/', 'p', 'o', 'd', 's', 0);
        assertThat(KeyBytes.encode(new byte[] {'a', 0, (byte) 0xff, '%'})).isEqualTo("a%00%ff%25");
        assertThat(KeyBytes.decode(KeyBytes.encode(new byte[] {1, 2, 'x', (byte) 0x80})))
                .containsExactly(1, 2, 'x', (byte) 0x80);
        assertThatThrownBy(() -> KeyBytes.decode("abc%4"))
                .isInstanceOf(IllegalArgumentException.class)
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
                .setDefaultValueProvider(new EnvironmentDefaults(
                        Map.of("WATCHFANOUT_KAFKA_BOOTSTRAP", "10.0.0.1:9092", "WATCHFANOUT_BOOKMARK_INTERVAL", "1s")))
                .parseArgs("--bookmark-interval", "2s");
        assertThat(demo.kafkaBootstrap).isEqualTo("10.0.0.1:9092");
        assertThat(demo.bookmarkInterval).isEqualTo(Duration.ofSeconds(2));
        assertThat(EnvironmentDefaults.variableFor("--topic-prefix")).isEqualTo("WATCHFANOUT_TOPIC_PREFIX");
    }
}

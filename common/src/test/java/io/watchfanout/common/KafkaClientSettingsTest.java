package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --kafka-config}: what a file may set, and what it is refused. */
class KafkaClientSettingsTest {
    @TempDir
    Path dir;

    @Test
    void securityAndTuningKeysPassThroughToEveryClient() throws Exception {
        Path file = dir.resolve("kafka.properties");
        Files.writeString(
                file,
                "# a comment\nsecurity.protocol=SASL_SSL\nsasl.mechanism = PLAIN\n"
                        + "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
                        + "  username=\"u\" password=\"secret\";\nssl.truststore.type=PEM\nrequest.timeout.ms=20000\n");
        KafkaClientSettings s = KafkaClientSettings.read(file);
        assertThat(s.asMap())
                .containsEntry("security.protocol", "SASL_SSL")
                .containsEntry("sasl.mechanism", "PLAIN")
                .containsEntry("request.timeout.ms", "20000")
                .hasSize(5);
        assertThat(s.asMap().get("sasl.jaas.config")).endsWith("username=\"u\" password=\"secret\";");
        Properties client = new Properties();
        s.applyTo(client);
        assertThat(client).containsEntry("ssl.truststore.type", "PEM");
        assertThat(s.toString()).contains("sasl.jaas.config").doesNotContain("secret");
    }

    @Test
    void keysTheProjectSetsItselfAreRefusedByName() throws Exception {
        for (String key : new String[] {
            "bootstrap.servers",
            "isolation.level",
            "transactional.id",
            "enable.idempotence",
            "group.id",
            "value.deserializer",
            "producer.transactional.id",
            "main.consumer.isolation.level"
        }) {
            assertThatThrownBy(() -> KafkaClientSettings.of(Map.of(key, "x")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(key + " may not be set");
        }
        Path file = dir.resolve("bad.properties");
        Files.writeString(file, "security.protocol=SSL\nisolation.level=read_uncommitted\n");
        assertThatThrownBy(() -> KafkaClientSettings.read(file))
                .hasMessage(file + ": isolation.level may not be set: watch-fanout sets it itself (only security, "
                        + "ssl, sasl and client tuning settings are taken)");
    }

    @Test
    void aMissingFileIsNamed() {
        Path missing = dir.resolve("nope.properties");
        assertThatThrownBy(() -> KafkaClientSettings.read(missing)).hasMessage(missing + ": no such file");
    }
}

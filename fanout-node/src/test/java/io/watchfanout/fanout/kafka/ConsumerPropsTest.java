package io.watchfanout.fanout.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.KafkaClientSettings;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

class ConsumerPropsTest {
    @Test
    void aNodesConsumerGivesUpADeadConnectionWithinSecondsNotKafkasHalfMinute() {
        Properties p = KafkaCacheLoader.consumerProps(
                "127.0.0.1:9092", KafkaClientSettings.NONE, "n1", "feed", ByteArrayDeserializer.class);
        assertThat(p)
                .containsEntry(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000")
                .containsEntry(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MS_CONFIG, "3000")
                .containsEntry(ConsumerConfig.SOCKET_CONNECTION_SETUP_TIMEOUT_MAX_MS_CONFIG, "5000");
        // what Kafka's client makes of them: the values are valid consumer settings
        ConsumerConfig config = new ConsumerConfig(p);
        assertThat(config.getInt(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG)).isEqualTo(5000);
    }

    @Test
    void kafkaConfigSettingsOfTheTimeoutsWin() {
        Properties p = KafkaCacheLoader.consumerProps(
                "127.0.0.1:9092",
                KafkaClientSettings.of(Map.of(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000")),
                "n1",
                "feed",
                ByteArrayDeserializer.class);
        assertThat(p).containsEntry(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
    }
}

package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.support.RefusingAlterConfigPolicy;
import io.watchfanout.ingester.topics.TopicManager;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.testkit.EtcdKafkaTest;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A state topic made by an older ingester (segment.ms 1 h, Kafka's dirty ratio) gets the eager
 * compaction settings when the ingester starts; a broker that refuses the change costs a warning,
 * not the start.
 */
@SuppressWarnings("try") // an ingester runs for the length of a try block
class StateTopicCompactionTest extends EtcdKafkaTest {
    StateTopicCompactionTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    /** The topics as an older ingester created them. */
    private static void createOldTopics(Admin admin, String prefix) throws Exception {
        admin.createTopics(List.of(
                        new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), Optional.of(1), Optional.empty())
                                .configs(Map.of("cleanup.policy", "delete", "retention.ms", "86400000")),
                        new NewTopic(WatchFanoutSerdes.stateTopic(prefix), Optional.of(1), Optional.empty())
                                .configs(Map.of(
                                        "cleanup.policy", "compact",
                                        "segment.ms", "3600000",
                                        "delete.retention.ms", "86400000"))))
                .all()
                .get();
    }

    private static Config stateConfig(Admin admin, String prefix) throws Exception {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, WatchFanoutSerdes.stateTopic(prefix));
        return admin.describeConfigs(List.of(r)).all().get().get(r);
    }

    private static Admin admin(String bootstrap) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
    }

    private Ingester startReady(String bootstrap) {
        Ingester ingester =
                Ingesters.inProcess(Ingesters.config(etcdServer.clientUrl(), bootstrap, topicPrefix, keyPrefix));
        await().atMost(Duration.ofMinutes(2))
                .until(() -> ingester.notReadyReason().isEmpty());
        return ingester;
    }

    @Test
    void anOldStateTopicGetsTheNewSettingsAtStart() throws Exception {
        try (Admin admin = admin(kafka.bootstrapServers())) {
            createOldTopics(admin, topicPrefix);
            try (Ingester ingester = startReady(kafka.bootstrapServers())) {
                Config c = stateConfig(admin, topicPrefix);
                assertThat(c.get("segment.ms").value()).isEqualTo("60000");
                assertThat(c.get("min.cleanable.dirty.ratio").value()).isEqualTo("0.1");
                assertThat(c.get("min.compaction.lag.ms").value()).isEqualTo("0");
                assertThat(c.get("delete.retention.ms").value())
                        .as("the tombstones' retention, which rebuilds are timed against, is not touched")
                        .isEqualTo("86400000");
                assertThat(c.get("cleanup.policy").value()).isEqualTo("compact");
            }
        }
    }

    @Test
    void aRefusedChangeIsAWarningAndTheIngesterStarts() throws Exception {
        Logger logger = (Logger) LoggerFactory.getLogger(TopicManager.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        logger.addAppender(lines);
        try (KafkaBroker refusing = KafkaBroker.builder()
                        .brokerProperty("alter.config.policy.class.name", RefusingAlterConfigPolicy.class.getName())
                        .build()
                        .start();
                Admin admin = admin(refusing.bootstrapServers())) {
            createOldTopics(admin, topicPrefix);
            try (Ingester ingester = startReady(refusing.bootstrapServers())) {
                assertThat(stateConfig(admin, topicPrefix).get("segment.ms").value())
                        .isEqualTo("3600000");
                assertThat(lines.list)
                        .filteredOn(e -> e.getLevel() == Level.WARN)
                        .map(ILoggingEvent::getFormattedMessage)
                        .anySatisfy(m -> assertThat(m)
                                .contains("topic " + WatchFanoutSerdes.stateTopic(topicPrefix) + " keeps")
                                .contains("cannot set {segment.ms=60000, min.cleanable.dirty.ratio=0.1}")
                                .contains(RefusingAlterConfigPolicy.REASON)
                                .contains("--add-config segment.ms=60000,min.cleanable.dirty.ratio=0.1"));
            }
        } finally {
            logger.detachAppender(lines);
        }
    }
}

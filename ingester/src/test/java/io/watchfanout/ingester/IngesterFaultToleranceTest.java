package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.ingester.publish.PublishedLog;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdKafkaTest;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/**
 * Invariant 1 (docs/ARCHITECTURE.md) under crashes, with the ingester as a real child process: kill -9 at random
 * moments, etcd killed and restarted, the Kafka broker down for 30 s, and a second ingester
 * fencing the first — and afterwards every revision is in the topic once, in order. The faults
 * come one after another on one topic while a background writer keeps etcd busy, and one
 * comparison with etcd's history at the end covers them all.
 */
class IngesterFaultToleranceTest extends EtcdKafkaTest {
    private static final Duration READY = Duration.ofSeconds(60);
    private static final String WATCHING = "watching etcd from revision";

    IngesterFaultToleranceTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    private JavaProcess ingester(String name, String... extra) {
        return Ingesters.process(name, etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix, extra);
    }

    /** The revision of the last committed record of the events topic (read back from its end), or -1. */
    private long lastPublishedRevision() {
        return new PublishedLog(
                        kafka.bootstrapServers(),
                        KafkaClientSettings.NONE,
                        WatchFanoutSerdes.eventsTopic(topicPrefix),
                        WatchFanoutSerdes.stateTopic(topicPrefix),
                        topicPrefix + ".test")
                .lastEventsRevision()
                .orElse(-1L);
    }

    /** Waits until the events topic holds {@code revision}. */
    private void awaitPublished(long revision) {
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> lastPublishedRevision() >= revision);
    }

    private void assertExactAfterCatchingUp() throws Exception {
        long until = EtcdWorkload.currentRevision(etcd);
        // Every write was in the range, so the last record reaches etcd's revision.
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> lastPublishedRevision() >= until);
        List<ConsumerRecord<byte[], EventsRecord>> records =
                EventsTopicDump.read(kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(topicPrefix));
        int compared = Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), until);
        assertThat(compared).isPositive();
    }

    @Test
    @SuppressWarnings("try") // the second ingester publishes for the length of its try block
    void killNineEtcdAndKafkaOutagesAndAFencingIngesterLoseAndRepeatNothing() throws Exception {
        try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5)) {
            killNineFiveTimes(writer);
            try (JavaProcess ingester = ingester("ingester", "--watch-queue-bytes", "64KiB")) {
                ingester.awaitLog(WATCHING, READY);
                awaitPublished(EtcdWorkload.currentRevision(etcd));
                survivesAnEtcdRestart(ingester);
                survivesAKafkaOutage(ingester, writer);
                try (JavaProcess second = aSecondIngesterWithTheSameIdentityFences(ingester)) {
                    writer.stop();
                    assertExactAfterCatchingUp();
                }
            }
        }
    }

    private void killNineFiveTimes(BackgroundWriter writer) throws Exception {
        Random random = new Random(7);
        for (int round = 0; round < 5; round++) {
            try (JavaProcess ingester = ingester("ingester-" + round)) {
                ingester.awaitLog(WATCHING, READY);
                Thread.sleep(500 + random.nextInt(2500)); // a random moment of publishing
                ingester.kill();
            }
        }
        assertThat(writer.operations()).isPositive();
    }

    private void survivesAnEtcdRestart(JavaProcess ingester) throws Exception {
        int linesBefore = logLines(ingester).size();
        etcdServer.kill();
        try {
            // Down until the ingester has seen it: its watch failed, or its probe lost etcd.
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> logLines(ingester).stream()
                            .skip(linesBefore)
                            .anyMatch(line -> line.contains("etcd watch failed") || line.contains("lost etcd at")));
        } finally {
            etcdServer.restart();
        }
        // Publishing again: writes made after the restart reach the topic.
        awaitPublished(EtcdWorkload.currentRevision(etcd));
    }

    private void survivesAKafkaOutage(JavaProcess ingester, BackgroundWriter writer) throws Exception {
        long rssBefore = rssKiB(ingester.pid());
        long writesBefore = writer.operations();
        long publishedBefore = lastPublishedRevision();
        kafka.stop();
        long maxRss = rssBefore;
        try {
            for (int i = 0; i < 30; i++) {
                Thread.sleep(1000);
                maxRss = Math.max(maxRss, rssKiB(ingester.pid()));
            }
        } finally {
            kafka.restart();
        }
        assertThat(writer.operations() - writesBefore)
                .as("writes during the outage")
                .isGreaterThan(100);
        String log = Files.readString(ingester.logFile());
        assertThat(log).contains("waiting for Kafka");
        // Bounded: the backlog of the outage stays in etcd, not in the ingester's heap.
        assertThat(maxRss - rssBefore).as("RSS growth in KiB during the outage").isLessThan(200 * 1024);
        // Publishing again: nothing could be committed while the broker was down.
        awaitPublished(publishedBefore + 1);
    }

    /** Starts a second ingester with the same identity, which fences the first; returns it, publishing. */
    private JavaProcess aSecondIngesterWithTheSameIdentityFences(JavaProcess first) throws Exception {
        JavaProcess second = ingester("ingester-second");
        try {
            second.awaitLog(WATCHING, READY);
            assertThat(first.waitForExit(Duration.ofSeconds(60))).hasValue(1);
            assertThat(Files.readString(first.logFile()))
                    .contains("has taken over")
                    .contains("this one stops writing");
            // The second publishes what is written after the first stopped.
            awaitPublished(EtcdWorkload.currentRevision(etcd));
            return second;
        } catch (Exception | AssertionError e) {
            second.close();
            throw e;
        }
    }

    private static List<String> logLines(JavaProcess process) throws Exception {
        return Files.readAllLines(process.logFile());
    }

    private static long rssKiB(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return 0;
    }
}

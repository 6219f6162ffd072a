package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.watchfanout.testkit.BackgroundWriter;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.JavaProcess;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TestPrefix;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Invariant 1 (docs/ARCHITECTURE.md) under crashes, with the ingester as a real child process: kill -9 at random
 * moments, a second ingester fencing the first, etcd killed and restarted, and the Kafka
 * broker down for 30 s — and afterwards every revision is in the topic once, in order.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class IngesterFaultToleranceTest {
  private static final Duration READY = Duration.ofSeconds(60);
  private final EtcdServer etcdServer;
  private final KafkaBroker kafka;
  private Client etcd;
  private String topicPrefix;
  private String keyPrefix;

  IngesterFaultToleranceTest(EtcdServer etcdServer, KafkaBroker kafka) {
    this.etcdServer = etcdServer;
    this.kafka = kafka;
  }

  @BeforeEach
  void setUp(Client client, TestPrefix prefix) {
    etcd = client;
    topicPrefix = prefix.topicPrefix();
    keyPrefix = prefix.keyPrefix();
  }


  private JavaProcess ingester(String name, String... extra) {
    return Ingesters.process(name, etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix, extra);
  }

  private long lastPublishedRevision() {
    List<ConsumerRecord<byte[], EventsRecord>> records =
        EventsTopicDump.read(kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(topicPrefix));
    return records.isEmpty() ? -1 : EventsRecords.revision(records.get(records.size() - 1).value());
  }

  private void assertExactAfterCatchingUp() throws Exception {
    long until = EtcdWorkload.currentRevision(etcd);
    // Every write was in the range, so the last record reaches etcd's revision.
    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
        .until(() -> lastPublishedRevision() >= until);
    List<ConsumerRecord<byte[], EventsRecord>> records =
        EventsTopicDump.read(kafka.bootstrapServers(), WatchFanoutSerdes.eventsTopic(topicPrefix));
    int compared = Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), until);
    assertThat(compared).isPositive();
  }

  @Test
  void killNineFiveTimesLosesAndRepeatsNothing() throws Exception {
    Random random = new Random(7);
    try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5)) {
      for (int round = 0; round < 5; round++) {
        try (JavaProcess ingester = ingester("ingester-" + round)) {
          ingester.awaitLog("watching etcd from revision", READY);
          Thread.sleep(500 + random.nextInt(2500));
          ingester.kill();
        }
      }
      assertThat(writer.operations()).isPositive();
    }
    try (JavaProcess ingester = ingester("ingester-final")) {
      ingester.awaitLog("watching etcd from revision", READY);
      assertExactAfterCatchingUp();
    }
  }

  @Test
  void aSecondIngesterWithTheSameIdentityFencesTheFirst() throws Exception {
    try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 10);
        JavaProcess first = ingester("ingester-first")) {
      first.awaitLog("watching etcd from revision", READY);
      Thread.sleep(1000);
      try (JavaProcess second = ingester("ingester-second")) {
        second.awaitLog("watching etcd from revision", READY);
        assertThat(first.waitForExit(Duration.ofSeconds(60))).hasValue(1);
        assertThat(Files.readString(first.logFile())).contains("has taken over").contains("this one stops writing");
        Thread.sleep(1000);
        writer.stop();
        assertExactAfterCatchingUp();
      }
    }
  }

  @Test
  void survivesAnEtcdRestartAndAKafkaOutage() throws Exception {
    try (BackgroundWriter writer = new BackgroundWriter(etcd, keyPrefix, 5);
        JavaProcess ingester = ingester("ingester", "--watch-queue-bytes", "64KiB")) {
      ingester.awaitLog("watching etcd from revision", READY);
      Thread.sleep(1500);

      etcdServer.kill();
      Thread.sleep(2000);
      etcdServer.restart();
      ingester.awaitLog("re-watching from", Duration.ofSeconds(30));
      Thread.sleep(2000);

      long rssBefore = rssKiB(ingester.pid());
      long writesBefore = writer.operations();
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
      assertThat(writer.operations() - writesBefore).as("writes during the outage").isGreaterThan(100);
      String log = Files.readString(ingester.logFile());
      assertThat(log).contains("waiting for Kafka");
      // Bounded: the backlog of the outage stays in etcd, not in the ingester's heap.
      assertThat(maxRss - rssBefore).as("RSS growth in KiB during the outage").isLessThan(200 * 1024);
      Thread.sleep(2000);
      writer.stop();
      assertExactAfterCatchingUp();
    }
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

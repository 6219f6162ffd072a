package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.ingester.etcd.EtcdEvents;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.StateRecordDeserializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Invariants 1–4 (docs/ARCHITECTURE.md) against real etcd and Kafka with an ingester in this JVM: the events topic
 * equals a direct etcd watch, revision by revision, and the state topic equals etcd.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class IngesterExactnessTest {
  private final EtcdServer etcdServer;
  private final KafkaBroker kafka;
  private Client etcd;
  private String topicPrefix;
  private String keyPrefix;

  IngesterExactnessTest(EtcdServer etcdServer, KafkaBroker kafka) {
    this.etcdServer = etcdServer;
    this.kafka = kafka;
  }

  @BeforeEach
  void setUp(TestInfo info) {
    etcd = Client.builder().endpoints(etcdServer.clientUrl()).maxInboundMessageSize(64 << 20).build();
    topicPrefix = TopicPrefixes.unique(info);
    keyPrefix = "/" + topicPrefix + "/";
  }

  @AfterEach
  void tearDown() {
    etcd.close();
  }

  private long lastRevision(String topic) {
    List<ConsumerRecord<byte[], EventsRecord>> records = EventsTopicDump.read(kafka.bootstrapServers(), topic);
    return records.isEmpty() ? -1 : EventsRecords.revision(records.get(records.size() - 1).value());
  }

  @Test
  void eventsTopicEqualsADirectWatchAndStateTopicEqualsEtcd() throws Exception {
    EtcdWorkload workload = new EtcdWorkload(etcd, keyPrefix, 42, 60);
    workload.run(100); // before the ingester starts: becomes the initial resync
    long beforeLease = EtcdWorkload.currentRevision(etcd);
    long lease = workload.leaseWithKeys(4, 2);
    String events = WatchFanoutSerdes.eventsTopic(topicPrefix);
    try (Ingester ingester = Ingesters.inProcess(
        Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix))) {
      await().atMost(Duration.ofSeconds(60)).until(() -> ingester.notReadyReason().isEmpty());
      long last = workload.run(1000);
      // Writes outside the range move revisions on without events of the range.
      new EtcdWorkload(etcd, "/elsewhere/" + topicPrefix + "/", 7, 10).run(20);
      long leaseGone = waitForLeaseExpiry(lease, beforeLease);
      long until = Math.max(last, leaseGone);
      await().atMost(Duration.ofSeconds(60)).until(() -> lastRevision(events) >= until);

      List<ConsumerRecord<byte[], EventsRecord>> records = EventsTopicDump.read(kafka.bootstrapServers(), events);
      int compared = Exactness.assertTopicEqualsEtcd(records, etcd, ByteString.copyFromUtf8(keyPrefix), until);
      assertThat(compared).isGreaterThanOrEqualTo(1000);
      assertThat(records).anySatisfy(r -> assertThat(r.value().getEvent().getCount()).isGreaterThan(1));
      // The lease expiry deleted its four keys in one revision.
      assertThat(Exactness.watchEvents(records)).filteredOn(e -> e.getType() == Event.Type.DELETE
          && e.getPrevKv().getLease() == lease).hasSize(4)
          .extracting(Event::getRevision).containsOnly(leaseGone);

      await().atMost(Duration.ofSeconds(60)).until(() -> readState(topicPrefix).checkpoint.getRevision()
          >= lastRevision(events));
      assertStateEqualsEtcd(readState(topicPrefix));
    }
  }

  private long waitForLeaseExpiry(long lease, long since) throws Exception {
    await().atMost(Duration.ofSeconds(30)).until(() -> etcd.getLeaseClient().timeToLive(lease,
        io.etcd.jetcd.options.LeaseOption.DEFAULT).get(5, TimeUnit.SECONDS).getTTL() <= 0
        && etcd.getKVClient().get(EtcdWorkload.bytes(keyPrefix + "lease-" + lease + "-0")).get(5, TimeUnit.SECONDS)
            .getKvs().isEmpty());
    List<Event> deletes = io.watchfanout.ingester.support.EtcdHistory.events(etcd,
        ByteString.copyFromUtf8(keyPrefix + "lease-" + lease + "-"), since + 1, EtcdWorkload.currentRevision(etcd));
    return deletes.get(deletes.size() - 1).getRevision();
  }

  /** The state topic read to its end. */
  record State(Map<ByteString, KeyValue> kvs, StateCheckpoint checkpoint) {}

  State readState(String prefix) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Map<ByteString, KeyValue> kvs = new HashMap<>();
    StateCheckpoint checkpoint = StateCheckpoint.getDefaultInstance();
    try (KafkaConsumer<byte[], StateRecord> consumer =
        new KafkaConsumer<>(props, new ByteArrayDeserializer(), new StateRecordDeserializer())) {
      TopicPartition tp = new TopicPartition(WatchFanoutSerdes.stateTopic(prefix), 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long end = consumer.endOffsets(List.of(tp)).get(tp);
      while (consumer.position(tp) < end) {
        for (ConsumerRecord<byte[], StateRecord> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.key().length == 0) {
            checkpoint = r.value().getCheckpoint();
          } else if (r.value() == null) {
            kvs.remove(ByteString.copyFrom(r.key()));
          } else {
            kvs.put(ByteString.copyFrom(r.key()), r.value().getKv());
          }
        }
      }
    }
    return new State(kvs, checkpoint);
  }

  private void assertStateEqualsEtcd(State state) throws Exception {
    List<io.etcd.jetcd.KeyValue> etcdKvs = etcd.getKVClient().get(EtcdWorkload.bytes(keyPrefix),
            GetOption.builder().isPrefix(true).withRevision(state.checkpoint.getRevision()).build())
        .get(10, TimeUnit.SECONDS).getKvs();
    Map<ByteString, KeyValue> expected = new HashMap<>();
    for (io.etcd.jetcd.KeyValue kv : etcdKvs) {
      KeyValue k = EtcdEvents.toKeyValue(kv);
      expected.put(k.getKey(), k);
    }
    assertThat(expected).isNotEmpty();
    assertThat(state.kvs).containsExactlyInAnyOrderEntriesOf(expected);
  }
}

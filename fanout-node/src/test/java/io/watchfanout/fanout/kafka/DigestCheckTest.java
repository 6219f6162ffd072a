package io.watchfanout.fanout.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.NodeTopics;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.schema.StateRecordSerializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node compares its cache with the digests of etcd's state that the ingester publishes in
 * progress records: equal digests are counted, and a record altered behind the
 * ingester's back in a copy of the topics is caught at the next digest and stops the node.
 */
@ExtendWith(KafkaExtension.class)
@Timeout(120)
class DigestCheckTest {
    /** Writes {@code before}, the state it made (checkpoint at revision 3) and {@code after} into {@code prefix}'s topics. */
    private static void topics(
            KafkaBroker kafka,
            String prefix,
            Map<ByteString, KeyValue> checkpointed,
            List<EventsRecord> before,
            List<List<EventsRecord>> after)
            throws Exception {
        String events = WatchFanoutSerdes.eventsTopic(prefix);
        String state = WatchFanoutSerdes.stateTopic(prefix);
        NodeTopics.create(kafka.bootstrapServers(), prefix);
        try (KafkaProducer<byte[], byte[]> producer = NodeTopics.producer(kafka.bootstrapServers(), prefix)) {
            LoadedCore.send(producer, events, before);
            producer.beginTransaction();
            StateRecordSerializer ss = new StateRecordSerializer();
            for (KeyValue kv : checkpointed.values()) {
                producer.send(new ProducerRecord<>(
                        state,
                        kv.getKey().toByteArray(),
                        ss.serialize(state, StateRecord.newBuilder().setKv(kv).build())));
            }
            // Offsets 0..2 hold the events before the checkpoint, 3 the commit marker.
            producer.send(NodeTopics.checkpoint(state, 3, 4));
            producer.commitTransaction();
            for (List<EventsRecord> txn : after) {
                LoadedCore.send(producer, events, txn);
            }
        }
    }

    private static List<EventsRecord> first3(EtcdLog etcd) {
        List<EventsRecord> first = new ArrayList<>();
        first.addAll(etcd.put("/a", "1"));
        first.addAll(etcd.put("/b", "1"));
        first.addAll(etcd.put("/c", "1"));
        return first;
    }

    @Test
    void digestsEqualToWhatTheNodeReadAreCountedEvenWhenTheyLieBehindIt(KafkaBroker kafka, TestInfo info)
            throws Exception {
        String prefix = TopicPrefixes.unique(info);
        EtcdLog etcd = new EtcdLog(0);
        List<EventsRecord> before = first3(etcd);
        Map<ByteString, KeyValue> checkpointed = etcd.state();
        List<List<EventsRecord>> after = new ArrayList<>();
        after.add(etcd.put("/a", "2"));
        StateDigest atFour = etcd.digestNow(2);
        // The ingester's read of the digest took a while: more events came before it was published.
        after.add(etcd.delete("/b"));
        after.add(etcd.put("/d", "1"));
        after.add(List.of(etcd.progressWithDigest(atFour)));
        after.add(List.of(etcd.progressWithDigest(etcd.digestNow(2))));

        topics(kafka, prefix, checkpointed, before, after);
        try (LoadedCore loaded = LoadedCore.start(kafka, prefix, "digest-test")) {
            WatchCore core = loaded.core();
            RebuildProgress progress = loaded.progress();
            await().atMost(Duration.ofSeconds(60)).until(() -> progress.digests("equal") == 2);
            assertThat(core.readiness().isRebuilt()).isTrue();
            assertThat(core.readiness().failure()).isNull();
            assertThat(progress.digests("different")).isZero();
            assertThat(progress.digestVerifiedRevision()).isEqualTo(etcd.revision() - 1);
            assertThat(progress.digestVerifiedMillis()).isPositive();
        }
    }

    @Test
    void aValueAlteredInTheTopicsIsCaughtAtTheNextDigestAndStopsTheNode(KafkaBroker kafka, TestInfo info)
            throws Exception {
        String prefix = TopicPrefixes.unique(info);
        EtcdLog etcd = new EtcdLog(0);
        List<EventsRecord> before = first3(etcd);
        Map<ByteString, KeyValue> checkpointed = etcd.state();
        List<List<EventsRecord>> after = new ArrayList<>();
        // etcd holds /a = 2; the copy of the topics says /a = tampered, with every chain field intact.
        EventsRecord put = etcd.put("/a", "2").get(0);
        after.add(List.of(put.toBuilder()
                .setEvent(put.getEvent().toBuilder()
                        .setKv(put.getEvent().getKv().toBuilder().setValue(ByteString.copyFromUtf8("tampered"))))
                .build()));
        after.add(etcd.put("/d", "1"));
        after.add(List.of(etcd.progressWithDigest(etcd.digestNow(2))));

        topics(kafka, prefix, checkpointed, before, after);
        try (LoadedCore loaded = LoadedCore.start(kafka, prefix, "digest-test")) {
            WatchCore core = loaded.core();
            RebuildProgress progress = loaded.progress();
            await().atMost(Duration.ofSeconds(60)).until(() -> core.readiness().failure() != null);
            assertThat(core.readiness().failure())
                    .contains("differs from etcd at revision " + (etcd.revision() - 1))
                    .contains("4 keys")
                    .contains("the cache differs first in keys [, /c): 2 keys where etcd has 2, values differ")
                    .contains("Restart the node to rebuild it from Kafka");
            assertThat(progress.digests("different")).isEqualTo(1);
            assertThat(progress.phase()).isEqualTo("failed");
        }
    }
}

package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.common.KeyRange;
import io.watchfanout.ingester.etcd.EtcdSnapshotReader;
import io.watchfanout.ingester.support.EventsTopicDump;
import io.watchfanout.ingester.support.Exactness;
import io.watchfanout.ingester.support.Ingesters;
import io.watchfanout.schema.EventsRecords;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Resync;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.EtcdWorkload;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * etcd 3.4 skips a DELETE that sits exactly at the compaction revision when a watch starts
 * there (etcd issue 18089). The ingester must rebuild that revision from a range read
 * instead of re-watching forever while it reports ready.
 */
@ExtendWith(KafkaExtension.class)
@SuppressWarnings("try") // an ingester runs for the length of a try block
class IngesterSkippedRevisionTest {
    private final KafkaBroker kafka;

    IngesterSkippedRevisionTest(KafkaBroker kafka) {
        this.kafka = kafka;
    }

    @Test
    void aDeleteSkippedAtTheCompactionRevisionIsRebuiltFromARangeRead(TestInfo info) throws Exception {
        String topicPrefix = TopicPrefixes.unique(info);
        String keyPrefix = "/" + topicPrefix + "/";
        String eventsTopic = WatchFanoutSerdes.eventsTopic(topicPrefix);
        ByteSequence key = EtcdWorkload.bytes(keyPrefix + "k");
        // A private etcd: compaction would cut the history other test classes read back.
        try (EtcdServer etcdServer = new EtcdServer().start();
                Client etcd = Client.builder().endpoints(etcdServer.clientUrl()).build()) {
            IngesterConfig config =
                    Ingesters.config(etcdServer.clientUrl(), kafka.bootstrapServers(), topicPrefix, keyPrefix);
            long lastPut = 0;
            try (Ingester ingester = Ingesters.inProcess(config)) {
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> ingester.notReadyReason().isEmpty());
                for (int i = 1; i <= 3; i++) {
                    lastPut = etcd.getKVClient()
                            .put(key, EtcdWorkload.bytes("v" + i))
                            .get(10, TimeUnit.SECONDS)
                            .getHeader()
                            .getRevision();
                }
                recordsUntil(eventsTopic, lastPut);
            }
            KeyValue beforeDelete = etcd.getKVClient()
                    .get(key)
                    .get(10, TimeUnit.SECONDS)
                    .getKvs()
                    .get(0);
            long deleted = etcd.getKVClient()
                    .delete(key)
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            long recreated = etcd.getKVClient()
                    .put(key, EtcdWorkload.bytes("v4"))
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            etcd.getKVClient().compact(deleted).get(10, TimeUnit.SECONDS);

            CollectorRegistry registry = new CollectorRegistry();
            try (Ingester ingester = new Ingester(config, registry)) {
                ingester.start();
                List<ConsumerRecord<byte[], EventsRecord>> records = recordsUntil(eventsTopic, recreated);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> ingester.notReadyReason().isEmpty());

                RevisionChain chain = new RevisionChain();
                records.forEach(r -> chain.accept(r.value()));
                assertThat(chain.atRevisionBoundary()).isTrue();
                assertThat(records)
                        .filteredOn(r -> r.value().hasResync())
                        .extracting(r -> r.value().getResync().getReason())
                        .containsExactly(Resync.Reason.INITIAL);
                List<Event> events = Exactness.watchEvents(records);
                assertThat(events).extracting(Event::getRevision).endsWith(lastPut, deleted, recreated);
                Event delete = events.get(events.size() - 2);
                assertThat(delete.getType()).isEqualTo(Event.Type.DELETE);
                assertThat(delete.getKv())
                        .isEqualTo(io.watchfanout.schema.v1.KeyValue.newBuilder()
                                .setKey(ByteString.copyFrom(key.getBytes()))
                                .setModRevision(deleted)
                                .build());
                assertThat(delete.getPrevKv())
                        .isEqualTo(io.watchfanout.ingester.etcd.EtcdEvents.toKeyValue(beforeDelete));
                Event put = events.get(events.size() - 1);
                assertThat(put.getType()).isEqualTo(Event.Type.PUT);
                assertThat(put.hasPrevKv()).isFalse();
                assertThat(put.getKv().getValue().toStringUtf8()).isEqualTo("v4");
                assertThat(registry.getSampleValue(
                                "watchfanout_ingester_skipped_revisions_total",
                                new String[] {"outcome"},
                                new String[] {"rebuilt"}))
                        .isEqualTo(1.0);
            }
            // etcd's answer to a read below its compaction revision, on which a rebuild resynchronises.
            long belowCompaction = lastPut;
            ExecutionException compacted = catchThrowableOfType(
                    ExecutionException.class,
                    () -> new EtcdSnapshotReader(etcd, 10, Duration.ofSeconds(10))
                            .read(KeyRange.prefix(ByteString.copyFromUtf8(keyPrefix)), belowCompaction));
            assertThat(PublishFailures.compactedRead(compacted.getCause()))
                    .as(String.valueOf(compacted.getCause()))
                    .isTrue();
        }
    }

    private List<ConsumerRecord<byte[], EventsRecord>> recordsUntil(String eventsTopic, long revision) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            List<ConsumerRecord<byte[], EventsRecord>> r = EventsTopicDump.read(kafka.bootstrapServers(), eventsTopic);
            return !r.isEmpty() && EventsRecords.revision(r.get(r.size() - 1).value()) >= revision;
        });
        return EventsTopicDump.read(kafka.bootstrapServers(), eventsTopic);
    }
}

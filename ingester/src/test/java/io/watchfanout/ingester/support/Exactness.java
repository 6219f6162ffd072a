package io.watchfanout.ingester.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.ingester.etcd.EtcdEvents;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.EtcdWorkload;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Checks an events topic against etcd: the exactly-once, revision-order invariant. */
public final class Exactness {
    private Exactness() {}

    /** The events of a topic's records after its last resync, without chain fields. */
    public static List<Event> watchEvents(List<ConsumerRecord<byte[], EventsRecord>> records) {
        List<Event> out = new ArrayList<>();
        for (ConsumerRecord<byte[], EventsRecord> r : records) {
            if (r.value().hasResync()) {
                out.clear();
            } else if (r.value().hasEvent() && !r.value().getEvent().getResync()) {
                Event e = r.value().getEvent();
                assertThat(r.key())
                        .as("record key")
                        .isEqualTo(e.getKv().getKey().toByteArray());
                out.add(e.toBuilder()
                        .clearIndex()
                        .clearCount()
                        .clearPrevRevision()
                        .build());
            }
        }
        return out;
    }

    /**
     * Asserts that the topic's records form an unbroken chain with whole revisions, that the
     * last revision is at least {@code untilRevision}, and that its events since the first
     * resync equal a direct etcd watch of the prefix over the same revisions.
     *
     * @return the number of events compared
     */
    public static int assertTopicEqualsEtcd(
            List<ConsumerRecord<byte[], EventsRecord>> records, Client etcd, ByteString prefix, long untilRevision)
            throws Exception {
        RevisionChain chain = new RevisionChain();
        long resyncRevision = -1;
        for (ConsumerRecord<byte[], EventsRecord> r : records) {
            chain.accept(r.value());
            if (resyncRevision < 0 && r.value().hasResync()) {
                resyncRevision = r.value().getResync().getRevision();
            }
        }
        assertThat(resyncRevision).as("initial resync").isGreaterThanOrEqualTo(0);
        assertThat(chain.atRevisionBoundary()).isTrue();
        assertThat(chain.lastRevision()).isGreaterThanOrEqualTo(untilRevision);
        List<Event> expected = EtcdHistory.events(etcd, prefix, resyncRevision + 1, chain.lastRevision());
        List<Event> actual = watchEvents(records);
        assertThat(actual).hasSize(expected.size());
        assertThat(actual).containsExactlyElementsOf(expected);
        return actual.size();
    }

    /**
     * Asserts that a state topic read to its end holds exactly etcd's keys under {@code prefix} at
     * the revision of its checkpoint, and that there is at least one.
     */
    public static void assertStateEqualsEtcd(StateTopicDump.State state, Client etcd, String prefix) throws Exception {
        List<io.etcd.jetcd.KeyValue> etcdKvs = etcd.getKVClient()
                .get(
                        EtcdWorkload.bytes(prefix),
                        GetOption.builder()
                                .isPrefix(true)
                                .withRevision(state.checkpoint().getRevision())
                                .build())
                .get(10, TimeUnit.SECONDS)
                .getKvs();
        Map<ByteString, KeyValue> expected = new HashMap<>();
        for (io.etcd.jetcd.KeyValue kv : etcdKvs) {
            KeyValue k = EtcdEvents.toKeyValue(kv);
            expected.put(k.getKey(), k);
        }
        assertThat(expected).isNotEmpty();
        assertThat(state.kvs()).containsExactlyInAnyOrderEntriesOf(expected);
    }
}

package io.watchfanout.ingester.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.ingester.etcd.WatchBatch;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RevisionAssemblerTest {
    private static final KeyRange PODS = KeyRange.prefix(ByteString.copyFromUtf8("/pods/"));

    private static Event put(String key, long revision) {
        return Event.newBuilder()
                .setType(Event.Type.PUT)
                .setKv(KeyValue.newBuilder()
                        .setKey(ByteString.copyFromUtf8(key))
                        .setModRevision(revision)
                        .setVersion(1))
                .setRevision(revision)
                .build();
    }

    private static WatchBatch batch(Event... events) {
        return new WatchBatch(
                events.length == 0 ? 0 : events[events.length - 1].getRevision(),
                events.length == 0,
                List.of(events),
                0);
    }

    @Test
    void numbersAndChainsTheEventsOfTheRange() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 10);
        assembler.accept(batch(
                put("/pods/a", 11), put("/other", 12), put("/pods/b", 13), put("/pods/c", 13), put("/other", 13)));
        List<KeyedRecord> records = assembler.drain(true);
        assertThat(records).hasSize(3);
        Event a = records.get(0).value().getEvent();
        assertThat(a.getRevision()).isEqualTo(11);
        assertThat(a.getPrevRevision()).isEqualTo(10);
        assertThat(a.getCount()).isEqualTo(1);
        Event b = records.get(1).value().getEvent();
        Event c = records.get(2).value().getEvent();
        assertThat(List.of(b.getIndex(), b.getCount(), c.getIndex(), c.getCount()))
                .containsExactly(0, 2, 1, 2);
        assertThat(b.getPrevRevision()).isEqualTo(11);
        assertThat(c.getPrevRevision()).isEqualTo(13);
        RevisionChain chain = new RevisionChain(10);
        records.forEach(r -> chain.accept(r.value()));
        assertThat(chain.atRevisionBoundary()).isTrue();
    }

    @Test
    void revisionsOutsideTheRangeBecomeOneProgressRecord() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 10);
        assembler.accept(batch(put("/pods/a", 11), put("/other", 12), put("/other", 13)));
        List<KeyedRecord> records = assembler.drain(true);
        assertThat(records).hasSize(2);
        assertThat(records.get(1).value().getProgress().getRevision()).isEqualTo(13);
        assertThat(records.get(1).value().getProgress().getPrevRevision()).isEqualTo(11);
        assertThat(assembler.drain(true)).isEmpty();
    }

    @Test
    void aProgressNotificationAheadOfTheEventsSeenProvesNothing() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 10);
        assembler.accept(new WatchBatch(50, true, List.of(), 0));
        assertThat(assembler.drain(true)).isEmpty();
        assertThat(assembler.provenRevision()).isEqualTo(10);
    }

    @Test
    void aSkippedRevisionIsAFault() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 10);
        assembler.accept(batch(put("/pods/a", 11)));
        assertThatThrownBy(() -> assembler.accept(batch(put("/pods/a", 13))))
                .isInstanceOf(DenseRevisionException.class)
                .hasMessageContaining("from revision 11 to 13");
    }

    @Test
    void repeatsOfPublishedRevisionsAreDropped() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 10);
        assembler.accept(batch(put("/pods/a", 9), put("/pods/a", 10), put("/pods/b", 11)));
        List<KeyedRecord> records = assembler.drain(true);
        assertThat(records).hasSize(1);
        assertThat(records.get(0).revision()).isEqualTo(11);
    }

    @Test
    void batchesAreCutOnlyBetweenRevisions() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 0);
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            events.add(put("/pods/x" + i, 1));
        }
        events.add(put("/pods/y", 2));
        assembler.accept(batch(events.toArray(Event[]::new)));
        assertThat(assembler.drainUpTo(3)).hasSize(5);
        assertThat(assembler.drainUpTo(3)).hasSize(1);
    }

    @Test
    void aDigestRidesOnAProgressRecordChainedLikeAHeartbeat() throws Exception {
        RevisionAssembler assembler = new RevisionAssembler(PODS, 10);
        assembler.accept(batch(put("/pods/a", 11)));
        assembler.accept(batch(put("/other/b", 12)));
        List<KeyedRecord> drained = assembler.drain(false);
        assertThat(drained).hasSize(1);
        StateDigest digest = StateDigest.newBuilder()
                .setRevision(11)
                .setKeyCount(1)
                .setHash(42)
                .build();
        KeyedRecord record = assembler.digest(digest);
        assertThat(record.key()).isEmpty();
        assertThat(record.value().getProgress().getRevision()).isEqualTo(12);
        assertThat(record.value().getProgress().getPrevRevision()).isEqualTo(11);
        assertThat(record.value().getProgress().getDigest()).isEqualTo(digest);
        RevisionChain chain = new RevisionChain(10);
        chain.accept(drained.get(0).value());
        chain.accept(record.value());
        assertThat(chain.lastRevision()).isEqualTo(12);

        assertThatThrownBy(() ->
                        assembler.digest(digest.toBuilder().setRevision(13).build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("after the proven revision 12");
    }
}

package io.watchfanout.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.StateDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class DigestVerifierTest {
    /** A small etcd: key-values by key in etcd's byte order, and the events that made them. */
    private static final class Model {
        final TreeMap<ByteString, KeyValue> state = new TreeMap<>(ByteString.unsignedLexicographicalComparator());
        final List<Event> events = new ArrayList<>();
        long revision = 1;

        Event put(String key, String value) {
            revision++;
            ByteString k = ByteString.copyFromUtf8(key);
            KeyValue before = state.get(k);
            KeyValue kv = KeyValue.newBuilder()
                    .setKey(k)
                    .setValue(ByteString.copyFromUtf8(value))
                    .setCreateRevision(before == null ? revision : before.getCreateRevision())
                    .setModRevision(revision)
                    .setVersion(before == null ? 1 : before.getVersion() + 1)
                    .build();
            state.put(k, kv);
            Event.Builder e =
                    Event.newBuilder().setType(Event.Type.PUT).setKv(kv).setRevision(revision);
            if (before != null) {
                e.setPrevKv(before);
            }
            Event event = e.build();
            events.add(event);
            return event;
        }

        Event delete(String key) {
            revision++;
            ByteString k = ByteString.copyFromUtf8(key);
            KeyValue before = state.remove(k);
            Event e = Event.newBuilder()
                    .setType(Event.Type.DELETE)
                    .setKv(KeyValue.newBuilder().setKey(k).setModRevision(revision))
                    .setPrevKv(before)
                    .setRevision(revision)
                    .build();
            events.add(e);
            return e;
        }

        StateDigest digest(int keysPerRange) {
            StateDigestBuilder b = new StateDigestBuilder(revision, keysPerRange);
            state.values().forEach(b::add);
            return b.build();
        }
    }

    private static EventsRecord progress(StateDigest digest) {
        return EventsRecord.newBuilder()
                .setProgress(
                        Progress.newBuilder().setRevision(digest.getRevision()).setDigest(digest))
                .build();
    }

    private static EventsRecord record(Event e) {
        return EventsRecord.newBuilder().setEvent(e).build();
    }

    /** 200 keys written, rewritten and deleted at random. */
    private static void churn(Model m, Random random, int writes) {
        for (int i = 0; i < writes; i++) {
            String key = String.format("/registry/pods/ns-%d/pod-%03d", random.nextInt(4), random.nextInt(50));
            if (random.nextInt(5) == 0 && m.state.containsKey(ByteString.copyFromUtf8(key))) {
                m.delete(key);
            } else {
                m.put(key, "v" + random.nextInt(1000));
            }
        }
    }

    @Test
    void aDigestTakenEarlierThanTheRecordsReadIsEqualToTheStateAtItsRevision() {
        Model m = new Model();
        Random random = new Random(1);
        churn(m, random, 500);
        StateDigest atR = m.digest(16);
        int published = m.events.size();
        churn(m, random, 300); // published before the digest: the scan took a while
        DigestVerifier v = new DigestVerifier(10_000);
        m.events.forEach(e -> assertThat(v.accept(record(e))).isEmpty());
        DigestVerifier.Verdict verdict = v.accept(progress(atR)).orElseThrow();
        assertThat(verdict.outcome()).as(verdict.toString()).isEqualTo(DigestVerifier.Outcome.EQUAL);
        assertThat(published).isLessThan(m.events.size());
        // And now: the same for the latest revision, with nothing to take back.
        assertThat(v.check(m.digest(16)).outcome()).isEqualTo(DigestVerifier.Outcome.EQUAL);
        assertThat(v.state().keyCount()).isEqualTo(m.state.size());
    }

    @Test
    void aStateThatLostAnEventDiffersAndTheRangeOfItsKeyIsNamed() {
        Model m = new Model();
        Random random = new Random(2);
        churn(m, random, 400);
        Event lost = m.put("/registry/pods/ns-2/pod-777", "lost");
        churn(m, random, 100);
        DigestVerifier v = new DigestVerifier(10_000);
        TreeMap<ByteString, KeyValue> reader = new TreeMap<>(ByteString.unsignedLexicographicalComparator());
        for (Event e : m.events) {
            if (e == lost) {
                continue; // a node that skipped a record
            }
            v.apply(e);
            if (e.getType() == Event.Type.PUT) {
                reader.put(e.getKv().getKey(), e.getKv());
            } else {
                reader.remove(e.getKv().getKey());
            }
        }
        StateDigest digest = m.digest(8);
        DigestVerifier.Verdict verdict = v.check(digest);
        assertThat(verdict.outcome()).isEqualTo(DigestVerifier.Outcome.DIFFERENT);
        assertThat(verdict.actual().keyCount()).isEqualTo(digest.getKeyCount() - 1);

        DigestRanges.Difference d =
                DigestRanges.firstDifference(digest, reader.values(), List.of()).orElseThrow();
        ByteString key = lost.getKv().getKey();
        assertThat(ByteString.unsignedLexicographicalComparator().compare(d.start(), key))
                .isLessThanOrEqualTo(0);
        assertThat(d.end().isEmpty()
                        || ByteString.unsignedLexicographicalComparator().compare(key, d.end()) < 0)
                .as(d.toString())
                .isTrue();
        assertThat(d.actualKeys()).isEqualTo(d.expectedKeys() - 1);
    }

    @Test
    void rangesAreComparedAtTheDigestsRevisionByTakingLaterEventsBack() {
        Model m = new Model();
        Random random = new Random(3);
        churn(m, random, 300);
        StateDigest atR = m.digest(4);
        int before = m.events.size();
        churn(m, random, 200);
        List<Event> after = m.events.subList(before, m.events.size());
        assertThat(DigestRanges.firstDifference(atR, m.state.values(), after)).isEmpty();
        // A value changed behind the events' back is found, in its range.
        Map.Entry<ByteString, KeyValue> first = m.state.firstEntry();
        m.state.put(
                first.getKey(),
                first.getValue().toBuilder()
                        .setValue(ByteString.copyFromUtf8("x"))
                        .build());
        DigestRanges.Difference d =
                DigestRanges.firstDifference(atR, m.state.values(), after).orElseThrow();
        assertThat(d.index()).isZero();
        assertThat(d.hashDiffers()).isTrue();
    }

    @Test
    void resyncEntriesCarryThePreviousValueAndKeepTheHash() {
        Model m = new Model();
        m.put("/a", "1");
        m.put("/b", "1");
        DigestVerifier v = new DigestVerifier(100);
        m.events.forEach(v::apply);
        // A resync at revision 10: /a changed, /b gone, /c new, each entry with the value published before.
        ByteString a = ByteString.copyFromUtf8("/a");
        ByteString b = ByteString.copyFromUtf8("/b");
        KeyValue a2 = KeyValue.newBuilder()
                .setKey(a)
                .setValue(ByteString.copyFromUtf8("2"))
                .setCreateRevision(2)
                .setModRevision(9)
                .setVersion(4)
                .build();
        KeyValue c = KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8("/c"))
                .setValue(ByteString.copyFromUtf8("1"))
                .setCreateRevision(8)
                .setModRevision(8)
                .setVersion(1)
                .build();
        v.apply(resync(Event.newBuilder().setType(Event.Type.PUT).setKv(a2).setPrevKv(m.state.get(a))));
        v.apply(resync(Event.newBuilder().setType(Event.Type.PUT).setKv(c)));
        v.apply(resync(Event.newBuilder()
                .setType(Event.Type.DELETE)
                .setKv(KeyValue.newBuilder().setKey(b).setModRevision(10))
                .setPrevKv(m.state.get(b))));
        StateDigestBuilder etcd = new StateDigestBuilder(10, 2);
        etcd.add(a2);
        etcd.add(c);
        assertThat(v.check(etcd.build()).outcome()).isEqualTo(DigestVerifier.Outcome.EQUAL);
    }

    private static Event resync(Event.Builder e) {
        return e.setRevision(10).setResync(true).build();
    }

    @Test
    void aDigestOlderThanTheRevisionsKeptCannotBeChecked() {
        Model m = new Model();
        Random random = new Random(4);
        churn(m, random, 50);
        StateDigest old = m.digest(10);
        churn(m, random, 50);
        DigestVerifier v = new DigestVerifier(20);
        m.events.forEach(v::apply);
        assertThat(v.check(old).outcome()).isEqualTo(DigestVerifier.Outcome.TOO_OLD);
        assertThat(v.check(m.digest(10)).outcome()).isEqualTo(DigestVerifier.Outcome.EQUAL);
    }

    @Test
    void theRevisionsKeptGrowAsTheyComeUpToTheBound() {
        Model m = new Model();
        Random random = new Random(5);
        churn(m, random, 10);
        StateDigest early = m.digest(10);
        churn(m, random, 3000);
        DigestVerifier v = new DigestVerifier(5000);
        m.events.forEach(v::apply);
        assertThat(v.check(early).outcome()).isEqualTo(DigestVerifier.Outcome.EQUAL);
        DigestVerifier bounded = new DigestVerifier(2000);
        m.events.forEach(bounded::apply);
        assertThat(bounded.check(early).outcome()).isEqualTo(DigestVerifier.Outcome.TOO_OLD);
        assertThat(bounded.check(m.digest(10)).outcome()).isEqualTo(DigestVerifier.Outcome.EQUAL);
    }

    @Test
    void theBuilderCutsRangesInKeyOrderAndRefusesDisorder() {
        Model m = new Model();
        for (int i = 0; i < 10; i++) {
            m.put("/k" + i, "v");
        }
        StateDigest d = m.digest(4);
        assertThat(d.getRangesList()).extracting(r -> r.getKeyCount()).containsExactly(4L, 4L, 2L);
        assertThat(d.getRanges(0).getStart()).isEqualTo(ByteString.EMPTY);
        assertThat(d.getRanges(1).getStart().toStringUtf8()).isEqualTo("/k4");
        StateHash sum = new StateHash();
        m.state.values().forEach(sum::add);
        assertThat(sum.matches(d)).isTrue();
        assertThat(new StateDigestBuilder(5, 1).build().getRangesCount()).isEqualTo(1);

        StateDigestBuilder b = new StateDigestBuilder(5, 4);
        b.add(m.state.lastEntry().getValue());
        assertThatThrownBy(() -> b.add(m.state.firstEntry().getValue()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("out of order");
    }

    @Test
    void theEntryHashCoversKeyValueAndRevisionsButNotTheLease() {
        KeyValue kv = KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8("/k"))
                .setValue(ByteString.copyFromUtf8("v"))
                .setCreateRevision(2)
                .setModRevision(3)
                .setVersion(2)
                .build();
        long h = StateHash.entryHash(kv);
        assertThat(StateHash.entryHash(kv.toBuilder().setLease(7).build())).isEqualTo(h);
        assertThat(StateHash.entryHash(kv.toBuilder().setModRevision(4).build()))
                .isNotEqualTo(h);
        assertThat(StateHash.entryHash(kv.toBuilder().setVersion(3).build())).isNotEqualTo(h);
        assertThat(StateHash.entryHash(kv.toBuilder().setCreateRevision(1).build()))
                .isNotEqualTo(h);
        assertThat(StateHash.entryHash(
                        kv.toBuilder().setValue(ByteString.copyFromUtf8("w")).build()))
                .isNotEqualTo(h);
        // Key and value are hashed apart: moving a byte from one to the other changes the hash.
        assertThat(StateHash.entryHash(kv.toBuilder()
                        .setKey(ByteString.copyFromUtf8("/kv"))
                        .setValue(ByteString.EMPTY)
                        .build()))
                .isNotEqualTo(h);
    }
}

package io.watchfanout.fanout.watch;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.FakeClock;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.schema.RevisionChainException;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class WatchCacheTest {
    private final FakeClock clock = new FakeClock();
    private final EtcdLog etcd = new EtcdLog(100);

    /** A feed straight into a cache (what WatchCore does under its lock). */
    private static final class Direct implements CacheFeed {
        final WatchCache cache;

        Direct(WatchCache cache) {
            this.cache = cache;
        }

        @Override
        public void loadState(List<KeyValue> sortedByKey) {
            cache.loadState(sortedByKey);
        }

        @Override
        public void startAt(long revision) {
            cache.startAt(revision);
        }

        @Override
        public void applyRevision(List<Event> events, long recordTimestampMillis) {
            cache.applyRevision(events);
        }

        @Override
        public void applyProgress(long revision) {
            cache.applyProgress(revision);
        }

        @Override
        public void applyResync(long revision, List<Event> entries) {
            cache.applyResync(revision, entries);
        }

        @Override
        public void tick() {
            cache.expireHistory();
        }

        @Override
        public void markReady() {}

        @Override
        public void feedStale(String problem) {}

        @Override
        public void fail(String reason) {}
    }

    private WatchCache cache(int maxEvents, Duration maxAge) {
        WatchCache c = new WatchCache(maxEvents, maxAge, clock);
        c.startAt(100);
        return c;
    }

    private static void feed(RecordFeed applier, List<EventsRecord> records) {
        records.forEach(applier::accept);
    }

    private static Map<ByteString, KeyValue> state(WatchCache c, KeyRange range) {
        return c.snapshot(range).stream().collect(Collectors.toMap(e -> e.kv().getKey(), StateEntry::kv));
    }

    @Test
    void aSortedSnapshotLoadsInOrderAndAnUnsortedOneIsRefused() {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        List<KeyValue> sorted = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            sorted.add(KeyValue.newBuilder()
                    .setKey(key(String.format("/k/%04d", i)))
                    .setModRevision(i + 1)
                    .build());
        }
        c.loadState(sorted);
        c.startAt(1000);
        assertThat(c.keyCount()).isEqualTo(1000);
        assertThat(c.snapshot(KeyRange.prefix(key("/k/099"))).stream()
                        .map(e -> e.kv().getKey().toStringUtf8()))
                .containsExactly(
                        "/k/0990", "/k/0991", "/k/0992", "/k/0993", "/k/0994", "/k/0995", "/k/0996", "/k/0997",
                        "/k/0998", "/k/0999");
        WatchCache other = cache(1000, Duration.ofMinutes(10));
        List<KeyValue> unsorted = List.of(sorted.get(1), sorted.get(0));
        assertThatThrownBy(() -> other.loadState(unsorted))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not strictly ascending");
    }

    @Test
    void aRebuiltCacheHoldsThePreloadedRevisionsBeforeItsStart() throws Exception {
        // What a node reads: the state at revision 104 and the revisions 102..104 before its checkpoint.
        List<EventsRecord> records = new ArrayList<>();
        records.addAll(etcd.put("/a/1", "x"));
        records.addAll(etcd.put("/a/2", "y"));
        records.addAll(etcd.txn(EtcdLog.Op.put("/a/1", "x2"), EtcdLog.Op.delete("/a/2")));
        records.addAll(etcd.put("/a/3", "z"));
        List<PreloadedRevision> preload = new ArrayList<>();
        List<Event> revision = new ArrayList<>();
        for (EventsRecord r : records.subList(1, records.size())) {
            if (r.hasEvent()) {
                revision.add(r.getEvent());
                if (r.getEvent().getIndex() == r.getEvent().getCount() - 1) {
                    preload.add(new PreloadedRevision(revision, clock.getAsLong()));
                    revision = new ArrayList<>();
                }
            }
        }
        WatchCache c = new WatchCache(1000, Duration.ofMinutes(10), clock);
        c.loadState(etcd.state().values().stream()
                .sorted((a, b) -> KeyRange.KEY_ORDER.compare(a.getKey(), b.getKey()))
                .toList());
        c.startAt(104, preload);
        assertThat(c.revision()).isEqualTo(104);
        assertThat(c.historyStartRevision()).isEqualTo(101);
        assertThat(c.historySize()).isEqualTo(4);
        // A list at 102 undoes what came after it, from the preloaded prev_kvs.
        assertThat(c.list(KeyRange.prefix(key("/a/")), key("/a/"), 102, 100).kvs().stream()
                        .map(kv ->
                                kv.getKey().toStringUtf8() + "=" + kv.getValue().toStringUtf8()))
                .containsExactly("/a/1=x", "/a/2=y");
        assertThatThrownBy(() -> c.list(KeyRange.prefix(key("/a/")), key("/a/"), 100, 100))
                .isInstanceOf(HistoryExpiredException.class);
        // Preloaded revisions age out like any: their age is their records' timestamp.
        clock.advance(Duration.ofMinutes(11));
        c.expireHistory();
        assertThat(c.historySize()).isZero();
        WatchCache other = new WatchCache(1000, Duration.ofMinutes(10), clock);
        assertThatThrownBy(() -> other.startAt(102, preload))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at most the start revision");
    }

    @Test
    void appliesEventsProgressAndEqualsTheModel() {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        feed(applier, etcd.put("/a/1", "x"));
        feed(applier, etcd.put("/a/2", "y"));
        feed(applier, etcd.txn(EtcdLog.Op.put("/a/1", "x2"), EtcdLog.Op.delete("/a/2"), EtcdLog.Op.put("/b/1", "z")));
        applier.accept(etcd.progress());
        assertThat(c.revision()).isEqualTo(etcd.revision()).isEqualTo(104);
        assertThat(state(c, KeyRange.all())).isEqualTo(etcd.state());
        assertThat(c.historySize()).isEqualTo(5);
        assertThat(c.keyCount()).isEqualTo(2);
        assertThat(state(c, KeyRange.prefix(key("/a/"))).keySet()).containsExactly(key("/a/1"));
        assertThat(state(c, KeyRange.single(key("/b/1"))).keySet()).containsExactly(key("/b/1"));
        assertThat(state(c, KeyRange.of(key("/a/"), key("/b/"))).keySet()).containsExactly(key("/a/1"));
        assertThat(state(c, KeyRange.of(key("/a/2"), ByteString.copyFrom(new byte[] {0})))
                        .keySet())
                .containsExactly(key("/b/1"));
    }

    @Test
    void aMultiEventRevisionIsAppliedOnlyWhenCompleteAndNoResumePointFallsInside() {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        List<EventsRecord> txn = etcd.txn(EtcdLog.Op.put("a", "1"), EtcdLog.Op.put("b", "2"), EtcdLog.Op.put("c", "3"));
        applier.accept(txn.get(0));
        applier.accept(txn.get(1));
        assertThat(c.revision()).as("not inside a revision").isEqualTo(100);
        assertThat(c.keyCount()).isZero();
        applier.accept(txn.get(2));
        assertThat(c.revision()).isEqualTo(101);
        List<CachedEvent> events = readAll(c, 100, KeyRange.all());
        assertThat(events)
                .as("every frame carries its revision")
                .extracting(CachedEvent::resourceVersion)
                .containsExactly(101L, 101L, 101L);
        assertThat(events)
                .as("only the last closes the revision")
                .extracting(CachedEvent::endsRevision)
                .containsExactly(false, false, true);
    }

    @Test
    void brokenChainIsRefusedAndNothingApplied() {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        etcd.put("skipped", "x");
        List<EventsRecord> next = etcd.put("a", "1");
        assertThatThrownBy(() -> applier.accept(next.get(0)))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("gap");
        assertThat(c.revision()).isEqualTo(100);
        RecordFeed fresh = new RecordFeed(new Direct(cache(10, Duration.ofMinutes(1))), -1);
        List<EventsRecord> txn = new EtcdLog(5).txn(EtcdLog.Op.put("a", "1"), EtcdLog.Op.put("b", "2"));
        assertThatThrownBy(() -> fresh.accept(txn.get(1)))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("starts inside revision");
    }

    @Test
    void resyncReplacesStateAndExpiresOlderHistory() throws Exception {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        feed(applier, etcd.put("a", "1"));
        feed(applier, etcd.put("b", "1"));
        long before = c.revision();
        feed(applier, etcd.resync(Map.of("b", "2", "c", "3")));
        assertThat(c.revision()).isEqualTo(etcd.revision());
        assertThat(state(c, KeyRange.all())).isEqualTo(etcd.state());
        assertThat(c.historySize()).isZero();
        assertThat(c.historyStartRevision()).isEqualTo(etcd.revision());
        assertThatThrownBy(() -> c.readHistory(before, KeyRange.all(), 10, 10))
                .isInstanceOf(HistoryExpiredException.class);
        assertThat(c.readHistory(etcd.revision(), KeyRange.all(), 10, 10).events())
                .isEmpty();
        feed(applier, etcd.put("d", "4"));
        assertThat(readAll(c, etcd.revision() - 1, KeyRange.all())).hasSize(1);
    }

    @Test
    void historySearchFindsEventsAfterARevisionInRange() throws Exception {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        for (int i = 0; i < 50; i++) {
            feed(applier, etcd.put((i % 2 == 0 ? "/even/" : "/odd/") + i, "v"));
            if (i % 10 == 0) {
                applier.accept(etcd.progress());
            }
        }
        List<CachedEvent> even = readAll(c, 120, KeyRange.prefix(key("/even/")));
        assertThat(even)
                .allMatch(e -> e.revision() > 120 && e.key().toStringUtf8().startsWith("/even/"));
        assertThat(even).isSortedAccordingTo((a, b) -> Long.compare(a.revision(), b.revision()));
        long expected = etcd.state().keySet().stream()
                .filter(k -> k.toStringUtf8().startsWith("/even/"))
                .filter(k -> c.snapshot(KeyRange.single(k)).get(0).kv().getModRevision() > 120)
                .count();
        assertThat(even).hasSize((int) expected);
        HistoryRead step = c.readHistory(100, KeyRange.all(), 3, 1000);
        assertThat(step.events()).hasSize(3);
        assertThat(step.reachedEnd()).isFalse();
        assertThat(step.cursor()).isEqualTo(step.events().get(2).revision());
        HistoryRead end = c.readHistory(c.revision(), KeyRange.all(), 3, 1000);
        assertThat(end.events()).isEmpty();
        assertThat(end.reachedEnd()).isTrue();
    }

    @Test
    void historyIsBoundedByCountInWholeRevisions() throws Exception {
        WatchCache c = cache(5, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        feed(applier, etcd.put("a", "1")); // 101
        feed(applier, etcd.txn(EtcdLog.Op.put("b", "1"), EtcdLog.Op.put("c", "1"))); // 102 (2)
        feed(applier, etcd.put("d", "1")); // 103
        feed(applier, etcd.put("e", "1")); // 104
        assertThat(c.historySize()).isEqualTo(5);
        feed(applier, etcd.put("f", "1")); // 105: evicts 101
        assertThat(c.historySize()).isEqualTo(5);
        assertThat(c.historyStartRevision()).isEqualTo(101);
        feed(applier, etcd.put("g", "1")); // 106: evicts all of 102
        assertThat(c.historySize()).isEqualTo(4);
        assertThat(c.historyStartRevision()).isEqualTo(102);
        assertThat(c.oldestHistoryRevision()).isEqualTo(103);
        assertThatThrownBy(() -> c.readHistory(101, KeyRange.all(), 10, 100))
                .isInstanceOf(HistoryExpiredException.class);
        assertThat(readAll(c, 102, KeyRange.all()))
                .extracting(CachedEvent::revision)
                .containsExactly(103L, 104L, 105L, 106L);
        assertThat(state(c, KeyRange.all())).isEqualTo(etcd.state());
    }

    @Test
    void historyExpiresByAgeWithAFakeClockAndReleasesFrames() throws Exception {
        WatchCache c = cache(1000, Duration.ofSeconds(60));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        feed(applier, etcd.put("old", "1"));
        clock.advance(Duration.ofSeconds(40));
        feed(applier, etcd.put("new", "1"));
        FrameEncoder encoder = new FrameEncoder();
        CachedEvent oldEvent = readAll(c, 100, KeyRange.all()).get(0);
        oldEvent.frame(WatchEventEncodings.JSON, encoder);
        c.expireHistory();
        assertThat(c.historySize()).isEqualTo(2);
        clock.advance(Duration.ofSeconds(21));
        c.expireHistory();
        assertThat(c.historySize()).isEqualTo(1);
        assertThat(c.historyStartRevision()).isEqualTo(101);
        assertThat(c.snapshot(KeyRange.single(key("old"))).get(0).lastEvent())
                .as("state forgets evicted events")
                .isNull();
        assertThat(c.snapshot(KeyRange.single(key("new"))).get(0).lastEvent()).isNotNull();
        oldEvent.frame(WatchEventEncodings.JSON, encoder);
        assertThat(encoder.encodes(WatchEventEncodings.JSON, FrameKind.EVENT))
                .as("evicted events keep no frames")
                .isEqualTo(2);
    }

    @Test
    void aStateInSmallArenaChunksEqualsEtcdThroughUpdatesDeletesCompactionsAndResyncs() throws Exception {
        for (int i = 0; i < 300; i++) {
            etcd.put(String.format("/k/%03d", i), "value-" + i);
        }
        WatchCache c = new WatchCache(50, Duration.ofMinutes(10), clock);
        ValueArena arena = new ValueArena(128);
        c.loadState(
                etcd.state().values().stream()
                        .sorted((a, b) -> KeyRange.KEY_ORDER.compare(a.getKey(), b.getKey()))
                        .toList(),
                arena);
        c.startAt(etcd.revision());
        assertThat(c.arena()).isSameAs(arena);
        assertThat(state(c, KeyRange.all())).isEqualTo(etcd.state());
        int loadedChunks = arena.chunkCount();
        assertThat(loadedChunks).isGreaterThan(20);
        RecordFeed applier = new RecordFeed(new Direct(c), etcd.revision());
        java.util.Random random = new java.util.Random(7);
        Map<ByteString, KeyValue> earlier = null;
        long earlierRevision = 0;
        for (int step = 0; step < 400; step++) {
            String k = String.format("/k/%03d", random.nextInt(300));
            if (step % 3 == 0) {
                feed(applier, etcd.delete(k));
            } else if (step % 3 == 1) {
                feed(applier, etcd.put(k, "update-" + step));
            } else {
                feed(applier, etcd.txn(EtcdLog.Op.delete(k), EtcdLog.Op.put(k + "/new", "n" + step)));
            }
            assertThat(state(c, KeyRange.all())).as("after step %d", step).isEqualTo(etcd.state());
            if (step == 380) {
                earlier = etcd.state();
                earlierRevision = c.revision();
            }
        }
        assertThat(arena.chunkCount())
                .as("chunks emptied by updates and deletes were compacted")
                .isLessThan(loadedChunks / 2);
        assertThat(arena.chunkBytesHeld())
                .as("every chunk but the one being filled is at least half live (less the unfilled end of a chunk)")
                .isLessThanOrEqualTo((long) (2.5 * arena.liveBytes()) + 2 * 128);
        ListPage atEarlier = c.list(KeyRange.all(), ByteString.EMPTY, earlierRevision, 1000);
        assertThat(atEarlier.kvs())
                .as("a list at a revision in the window, values moved meanwhile")
                .containsExactlyElementsOf(earlier.values());
        feed(applier, etcd.resync(Map.of("/k/000", "r0", "/k/001", "r1")));
        assertThat(state(c, KeyRange.all())).isEqualTo(etcd.state());
        c.loadState(List.of(KeyValue.newBuilder()
                .setKey(key("/z"))
                .setValue(ByteString.copyFromUtf8("reloaded"))
                .build()));
        assertThat(c.arena()).as("a reload brings its own arena").isNotSameAs(arena);
        assertThat(c.arena().holds(c.snapshot(KeyRange.all()).get(0).kv().getValue()))
                .isTrue();
    }

    @Test
    void pagedListsAreConsistentAtTheFirstPagesRevision() throws Exception {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        for (int i = 0; i < 10; i++) {
            feed(applier, etcd.put("k" + i, "v" + i));
        }
        Map<ByteString, KeyValue> atFirstPage = etcd.state();
        long rev = c.revision();
        ListPage p1 = c.list(KeyRange.prefix(key("k")), key("k"), rev, 4);
        assertThat(p1.kvs()).hasSize(4);
        // Changes after the first page: the next pages must not see them.
        feed(applier, etcd.delete("k5"));
        feed(applier, etcd.put("k6", "changed"));
        feed(applier, etcd.put("k55", "new"));
        List<KeyValue> all = new ArrayList<>(p1.kvs());
        ByteString next = p1.nextKey();
        while (next != null) {
            ListPage p = c.list(KeyRange.prefix(key("k")), next, rev, 4);
            assertThat(p.revision()).isEqualTo(rev);
            all.addAll(p.kvs());
            next = p.nextKey();
        }
        assertThat(all).containsExactlyElementsOf(atFirstPage.values());
        ListPage now = c.list(KeyRange.prefix(key("k")), key("k"), c.revision(), 100);
        assertThat(now.kvs()).containsExactlyElementsOf(etcd.state().values());
        assertThat(now.nextKey()).isNull();
        assertThatThrownBy(() -> c.list(KeyRange.all(), ByteString.EMPTY, 99, 10))
                .isInstanceOf(HistoryExpiredException.class);
    }

    @Test
    void aCountedPageCountsTheKeyValuesAfterItAtItsRevision() throws Exception {
        WatchCache c = cache(1000, Duration.ofMinutes(10));
        RecordFeed applier = new RecordFeed(new Direct(c), 100);
        for (int i = 0; i < 10; i++) {
            feed(applier, etcd.put("k" + i, "v" + i));
        }
        feed(applier, etcd.put("other", "x"));
        long rev = c.revision();
        // After rev: a delete, a new key and a change, inside and outside the page.
        feed(applier, etcd.delete("k7"));
        feed(applier, etcd.put("k35", "new"));
        feed(applier, etcd.put("k1", "changed"));
        feed(applier, etcd.delete("k2"));
        KeyRange range = KeyRange.prefix(key("k"));
        ListPage old = c.list(range, key("k"), rev, 4, true);
        assertThat(old.kvs()).extracting(kv -> kv.getKey().toStringUtf8()).containsExactly("k0", "k1", "k2", "k3");
        assertThat(old.nextKey()).isEqualTo(key("k4"));
        assertThat(old.remaining()).as("k4..k9 at rev").isEqualTo(6);
        ListPage now = c.list(range, key("k"), c.revision(), 4, true);
        assertThat(now.kvs()).extracting(kv -> kv.getKey().toStringUtf8()).containsExactly("k0", "k1", "k3", "k35");
        assertThat(now.remaining()).as("k4, k5, k6, k8, k9").isEqualTo(5);
        assertThat(c.list(range, key("k"), rev, 10, true).remaining())
                .as("one page")
                .isZero();
        assertThat(c.list(range, key("k"), rev, 9, true).remaining()).isEqualTo(1);
        assertThat(c.list(range, key("k"), rev, 4, false).remaining())
                .as("not counted")
                .isEqualTo(-1);
    }

    static List<CachedEvent> readAll(WatchCache c, long from, KeyRange range) {
        try {
            List<CachedEvent> out = new ArrayList<>();
            long cursor = from;
            while (true) {
                HistoryRead r = c.readHistory(cursor, range, 7, 11);
                out.addAll(r.events());
                cursor = r.cursor();
                if (r.reachedEnd()) {
                    return out;
                }
            }
        } catch (HistoryExpiredException e) {
            throw new AssertionError(e);
        }
    }
}

package io.watchfanout.fanout.watch;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.FakeClock;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.WatchEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Dispatch, parking, catch-up and rejoin, with transports the test drives by hand. */
class WatchCoreTest {
    private final FakeClock clock = new FakeClock();
    private final EtcdLog etcd = new EtcdLog(100);
    private WatchCore core;
    private RecordFeed applier;

    private void newCore(int historyMaxEvents, int queueFrames) {
        core = new WatchCore(
                CoreSettings.of(historyMaxEvents, Duration.ofMinutes(10), queueFrames, "test")
                        .withClock(clock),
                new FrameEncoder());
        core.feed().startAt(100);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), 100);
    }

    private void feed(List<EventsRecord> records) {
        records.forEach(applier::accept);
    }

    private TestSink watch(KeyRange range, Encoding enc, long rv, boolean bookmarks) throws HistoryExpiredException {
        return watch(WatchSpec.of(range, enc).from(rv).bookmarks(bookmarks).build());
    }

    private TestSink watch(WatchSpec spec) throws HistoryExpiredException {
        TestSink sink = new TestSink();
        try {
            sink.watcher = core.watch(spec, sink);
        } catch (TooManyReadsException e) {
            throw new AssertionError("no older history here", e);
        }
        return sink;
    }

    @Test
    void benchEncodePerWatcherEncodesOncePerDeliveryInsteadOfOncePerEvent() throws Exception {
        // The benchmark-only switch behind --bench-encode-per-watcher (bin/bench memo): same bytes, W encodes.
        core = new WatchCore(
                CoreSettings.of(1000, Duration.ofMinutes(10), 16, "test")
                        .withClock(clock)
                        .withEncodePerWatcher(true),
                new FrameEncoder());
        core.feed().startAt(100);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), 100);
        List<TestSink> sinks = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            sinks.add(watch(KeyRange.prefix(key("/p/")), WatchEventEncodings.JSON, 0, false));
        }
        feed(etcd.put("/p/a", "v"));
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT))
                .isEqualTo(5);
        for (TestSink s : sinks) {
            assertThat(s.watcher.queued()).isEqualTo(1);
        }
    }

    @Test
    void theRevisionAgeGrowsWhileNothingArrivesAndRestartsWithAnEventOrAProgressRecord() throws Exception {
        newCore(100, 16);
        double before = core.status().revisionAgeSeconds();
        Thread.sleep(20);
        double quiet = core.status().revisionAgeSeconds();
        assertThat(quiet).as("nothing arrived: it grows").isGreaterThan(before);
        feed(etcd.put("/a", "1"));
        assertThat(core.status().revisionAgeSeconds())
                .as("an event restarts it")
                .isLessThan(quiet);
        Thread.sleep(20);
        double again = core.status().revisionAgeSeconds();
        core.feed().applyProgress(core.status().revision());
        assertThat(core.status().revisionAgeSeconds())
                .as("a progress record at the same revision moves nothing")
                .isGreaterThan(again);
        core.feed().applyProgress(core.status().revision() + 1);
        assertThat(core.status().revisionAgeSeconds())
                .as("a progress record that advances restarts it")
                .isLessThan(again);
    }

    @Test
    void dispatchVisitsOnlyTheMatchingWatcherAmongTenThousand() throws Exception {
        newCore(1000, 16);
        List<TestSink> sinks = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            sinks.add(watch(KeyRange.single(key("/k/" + i)), WatchEventEncodings.PROTOBUF, 0, false));
        }
        assertThat(core.status().liveWatcherCount()).isEqualTo(10_000);
        long before = core.status().watcherVisits();
        feed(etcd.put("/k/1234", "v"));
        assertThat(core.status().watcherVisits() - before).isEqualTo(1);
        assertThat(sinks.get(1234).watcher.queued()).isEqualTo(1);
        assertThat(sinks.get(1233).watcher.queued()).isZero();
        // Prefix watchers too: one disjoint prefix each, one more event.
        newCore(1000, 16);
        for (int i = 0; i < 10_000; i++) {
            watch(KeyRange.prefix(key(String.format("/ns/%05d/", i))), WatchEventEncodings.JSON, 0, false);
        }
        long visits = core.status().watcherVisits();
        long nodes = core.status().indexNodesExamined();
        feed(new EtcdLog(100).put("/ns/00042/pod", "v"));
        assertThat(core.status().watcherVisits() - visits).isEqualTo(1);
        assertThat(core.status().indexNodesExamined() - nodes).isLessThan(200);
    }

    @Test
    void eachEventIsEncodedOncePerEncodingAndDeliveredToEveryWatcher() throws Exception {
        newCore(1000, 1000);
        List<TestSink> sinks = new ArrayList<>();
        String[] prefixes = {"/a/", "/a/b/", "/", "/c/"};
        for (int i = 0; i < 40; i++) {
            sinks.add(watch(
                    KeyRange.prefix(key(prefixes[i % prefixes.length])),
                    ((i / 4) % 2 == 0 ? WatchEventEncodings.JSON : WatchEventEncodings.PROTOBUF),
                    0,
                    false));
        }
        for (int i = 0; i < 60; i++) {
            feed(etcd.put(i % 3 == 0 ? "/a/b/" + i : i % 3 == 1 ? "/a/" + i : "/c/" + i, "v"));
        }
        feed(etcd.txn(EtcdLog.Op.put("/a/x", "1"), EtcdLog.Op.put("/c/y", "2")));
        long delivered = 0;
        for (TestSink s : sinks) {
            s.readAll();
            delivered += s.received.size();
        }
        // Every event matches the "/" watchers of both encodings: 62 distinct events x 2 encodings.
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT))
                .isEqualTo(62);
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.PROTOBUF, FrameKind.EVENT))
                .isEqualTo(62);
        assertThat(core.stats().framesDelivered(WatchEventEncodings.JSON)
                        + core.stats().framesDelivered(WatchEventEncodings.PROTOBUF))
                .isEqualTo(delivered);
        // Same bytes, not copies: the frames of one event are the same buffer for every watcher.
        TestSink all1 = sinks.get(2);
        TestSink all2 = sinks.get(10);
        assertThat(all1.watcher.spec().encoding()).isEqualTo(all2.watcher.spec().encoding());
        for (int i = 0; i < all1.rawFrames.size(); i++) {
            assertThat(all1.rawFrames.get(i)).isSameAs(all2.rawFrames.get(i));
        }
        assertThat(sinks.get(1).events()).as("the /a/b/ watcher").hasSize(20);
        assertThat(sinks.get(0).events()).as("the /a/ watcher").hasSize(41);
    }

    @Test
    void aStalledWatcherIsParkedWhileTwentyFastOnesGetEverythingThenCatchesUpAndRejoins() throws Exception {
        newCore(10_000, 8);
        TestSink slow = watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, 0, false);
        List<TestSink> fast = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            fast.add(watch(
                    KeyRange.prefix(key("/")),
                    (i % 2 == 0 ? WatchEventEncodings.JSON : WatchEventEncodings.PROTOBUF),
                    0,
                    false));
        }
        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            feed(etcd.put("/k" + (i % 17), "v" + i));
            expected.add(etcd.revision());
            fast.forEach(TestSink::readAll);
        }
        assertThat(core.stats().parked()).isEqualTo(1);
        assertThat(slow.watcher.isLive()).isFalse();
        assertThat(slow.watcher.queued())
                .as("memory bounded by the queue, not the backlog")
                .isLessThanOrEqualTo(8);
        for (TestSink f : fast) {
            assertThat(f.eventRevisions()).containsExactlyElementsOf(expected);
        }
        // The slow reader reads at its own pace, a few frames at a time, while events keep coming.
        for (int i = 0; i < 100; i++) {
            slow.read(3);
            feed(etcd.put("/late" + (i % 5), "v"));
            expected.add(etcd.revision());
        }
        slow.readAll();
        assertThat(slow.eventRevisions())
                .as("in order, nothing lost or repeated")
                .containsExactlyElementsOf(expected);
        assertThat(slow.watcher.isLive()).isTrue();
        assertThat(core.stats().unparked()).isEqualTo(1);
        feed(etcd.put("/after", "v"));
        expected.add(etcd.revision());
        assertThat(slow.watcher.queued()).as("live again: dispatch reaches it").isEqualTo(1);
        slow.readAll();
        assertThat(slow.eventRevisions()).containsExactlyElementsOf(expected);
    }

    /** A watcher that read nothing while 50 events went through a history window of 20. */
    private TestSink stalledPastAWindowOf20(Encoding encoding, boolean bookmarks) throws Exception {
        newCore(20, 4);
        TestSink slow = watch(KeyRange.prefix(key("/")), encoding, 0, bookmarks);
        for (int i = 0; i < 50; i++) {
            feed(etcd.put("/k" + i, "v"));
        }
        return slow;
    }

    @Test
    void aWatcherStalledPastTheHistoryWindowGets410ExpiredThenTheEnd() throws Exception {
        TestSink slow = stalledPastAWindowOf20(WatchEventEncodings.PROTOBUF, true);
        assertThat(slow.watcher.isCatchingUp()).isTrue();
        slow.readAll();
        WatchEvent last = slow.received.get(slow.received.size() - 1);
        assertThat(last.getType()).isEqualTo(WatchEvent.Type.ERROR);
        assertThat(last.getStatus().getCode()).isEqualTo(410);
        assertThat(last.getStatus().getReason()).isEqualTo("Expired");
        assertThat(slow.ended).isTrue();
        assertThat(core.stats().endedExpired()).isEqualTo(1);
        assertThat(core.status().watcherCount()).isZero();
    }

    @Test
    void theTickEndsAParkedWatcherThatFellBehindEvenIfItDoesNotRead() throws Exception {
        TestSink slow = stalledPastAWindowOf20(WatchEventEncodings.JSON, false);
        core.tickNow();
        assertThat(slow.watcher.queued())
                .as("backlog dropped, only the ERROR waits")
                .isEqualTo(1);
        slow.readAll();
        assertThat(slow.received).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.ERROR);
    }

    @Test
    void aMultiEventRevisionArrivesWholeEvenWhenLargerThanTheQueue() throws Exception {
        newCore(1000, 2);
        TestSink w = watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, 0, true);
        feed(etcd.txn(EtcdLog.Op.put("/a", "1"), EtcdLog.Op.put("/b", "1"), EtcdLog.Op.put("/c", "1")));
        long rev = etcd.revision();
        w.read(64);
        assertThat(w.events()).hasSize(3);
        assertThat(w.events()).extracting(WatchEvent::getIndex).containsExactly(0, 1, 2);
        assertThat(w.events()).extracting(WatchEvent::getCount).containsExactly(3, 3, 3);
        assertThat(w.events())
                .as("every frame carries its revision")
                .extracting(WatchEvent::getResourceVersion)
                .containsExactly(rev, rev, rev);
        core.tickNow();
        w.readAll();
        WatchEvent bookmark = w.received.get(w.received.size() - 1);
        assertThat(bookmark.getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
        assertThat(bookmark.getResourceVersion()).isEqualTo(rev);
    }

    @Test
    void bookmarksCarryTheRevisionProgressAdvancesAndResumingThereMissesNothing() throws Exception {
        newCore(1000, 64);
        TestSink quiet = watch(KeyRange.prefix(key("/quiet/")), WatchEventEncodings.JSON, 0, true);
        feed(etcd.put("/busy/1", "v"));
        applier.accept(etcd.progress());
        core.tickNow();
        quiet.readAll();
        assertThat(quiet.received).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.BOOKMARK);
        long bookmark = quiet.received.get(0).getResourceVersion();
        assertThat(bookmark).isEqualTo(etcd.revision());
        feed(etcd.put("/quiet/a", "v"));
        TestSink resumed = watch(KeyRange.prefix(key("/quiet/")), WatchEventEncodings.JSON, bookmark, true);
        resumed.readAll();
        assertThat(resumed.eventRevisions()).containsExactly(etcd.revision());
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.BOOKMARK))
                .isEqualTo(1);
    }

    @Test
    void sendInitialEventsListsTheRangeThenBookmarksThenStreams() throws Exception {
        newCore(1000, 4);
        for (int i = 0; i < 10; i++) {
            feed(etcd.put("/p/" + i, "v"));
        }
        feed(etcd.put("/p/3", "changed"));
        feed(etcd.put("/other", "v"));
        long s = etcd.revision();
        TestSink w = watch(WatchSpec.of(KeyRange.prefix(key("/p/")), WatchEventEncodings.PROTOBUF)
                .initialEvents(true)
                .build());
        feed(etcd.put("/p/new", "v"));
        w.readAll();
        List<WatchEvent> got = w.received;
        assertThat(got.subList(0, 10)).allMatch(e -> e.getType() == WatchEvent.Type.ADDED);
        assertThat(got.subList(0, 10))
                .extracting(e -> e.getObject().getKey().toStringUtf8())
                .containsExactly("/p/0", "/p/1", "/p/2", "/p/3", "/p/4", "/p/5", "/p/6", "/p/7", "/p/8", "/p/9");
        assertThat(got.get(3).getObject().getVersion()).isEqualTo(2);
        assertThat(got.get(10).getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
        assertThat(got.get(10).getInitialEventsEnd()).isTrue();
        assertThat(got.get(10).getResourceVersion()).isEqualTo(s);
        assertThat(got.get(11).getObject().getKey().toStringUtf8()).isEqualTo("/p/new");
        assertThat(got).hasSize(12);
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.PROTOBUF, FrameKind.INITIAL))
                .isEqualTo(10);
        TestSink again = watch(WatchSpec.of(KeyRange.prefix(key("/p/")), WatchEventEncodings.PROTOBUF)
                .initialEvents(true)
                .build());
        again.readAll();
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.PROTOBUF, FrameKind.INITIAL))
                .as("initial frames of keys whose last event is in the window are memoized")
                .isEqualTo(11);
    }

    @Test
    void resumeFromBeforeTheWindowIs410AndAResyncEndsOpenWatchers() throws Exception {
        newCore(5, 64);
        for (int i = 0; i < 10; i++) {
            feed(etcd.put("/k" + i, "v"));
        }
        assertThatThrownBy(() -> watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, 101, false))
                .isInstanceOf(HistoryExpiredException.class);
        TestSink open = watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, 0, false);
        long before = etcd.revision();
        feed(etcd.resync(Map.of("/k1", "new")));
        open.readAll();
        assertThat(open.received).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.ERROR);
        assertThat(open.received.get(0).getStatus().getCode()).isEqualTo(410);
        assertThatThrownBy(() -> watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, before, false))
                .isInstanceOf(HistoryExpiredException.class);
        assertThat(core.stats().resyncs()).isEqualTo(1);
        assertThat(core.stats().endedByResync()).isEqualTo(1);
        TestSink after = watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, 0, false);
        feed(etcd.put("/k1", "after the resync"));
        after.readAll();
        assertThat(after.eventRevisions())
                .as("a watch opened after the resync is not ended by it")
                .containsExactly(etcd.revision());
    }

    /** The SSE id lines of the frames a sink received, in order (null where a frame has none). */
    private static List<String> sseIds(TestSink sink) {
        List<String> ids = new ArrayList<>();
        for (java.nio.ByteBuffer f : sink.rawFrames) {
            ids.add(io.watchfanout.fanout.testing.Frames.parseSseFrame(f).id());
        }
        return ids;
    }

    @Test
    void sseIdsStandOnlyOnEachWatchersLastFrameOfARevisionLiveAndFromHistory() throws Exception {
        newCore(1000, 64);
        TestSink all = watch(KeyRange.prefix(key("/")), WatchEventEncodings.SSE, 0, false);
        TestSink partial = watch(KeyRange.prefix(key("/a/")), WatchEventEncodings.SSE, 0, false);
        long start = etcd.revision();
        feed(etcd.put("/a/1", "v"));
        long single = etcd.revision();
        // Index 0 and 2 match /a/, index 1 and 3 do not: /a/ never sees index == count - 1.
        feed(etcd.txn(
                EtcdLog.Op.put("/a/x", "1"),
                EtcdLog.Op.put("/c/y", "2"),
                EtcdLog.Op.put("/a/z", "3"),
                EtcdLog.Op.put("/c/w", "4")));
        long txn = etcd.revision();
        all.readAll();
        partial.readAll();
        String s = Long.toString(single);
        String t = Long.toString(txn);
        assertThat(sseIds(all)).containsExactly(s, null, null, null, t);
        assertThat(sseIds(partial)).containsExactly(s, null, t);
        // The same from history (a watcher catching up) and the frames are the very same buffers.
        TestSink replay = watch(KeyRange.prefix(key("/a/")), WatchEventEncodings.SSE, start, false);
        replay.readAll();
        assertThat(sseIds(replay)).containsExactly(s, null, t);
        for (int i = 0; i < 3; i++) {
            assertThat(replay.rawFrames.get(i)).isSameAs(partial.rawFrames.get(i));
        }
        assertThat(core.frameEncoder().encodes(WatchEventEncodings.SSE, FrameKind.EVENT))
                .as("once per event")
                .isEqualTo(5);
        // A client cut after the first /a/ frame of the transaction knows the id `single` at most:
        // resuming from it delivers the transaction again, whole; nothing is lost.
        TestSink resumed = watch(KeyRange.prefix(key("/a/")), WatchEventEncodings.SSE, single, false);
        resumed.readAll();
        assertThat(resumed.events())
                .extracting(e -> e.getObject().getKey().toStringUtf8())
                .containsExactly("/a/x", "/a/z");
        assertThat(sseIds(resumed)).containsExactly(null, t);
    }

    @Test
    void sseInitialEventsCarryNoIdAndTheirClosingBookmarkDoes() throws Exception {
        newCore(1000, 64);
        feed(etcd.put("/p/1", "v"));
        feed(etcd.put("/p/2", "v"));
        long s = etcd.revision();
        TestSink w = watch(WatchSpec.of(KeyRange.prefix(key("/p/")), WatchEventEncodings.SSE)
                .bookmarks(true)
                .initialEvents(true)
                .build());
        w.readAll();
        assertThat(sseIds(w)).containsExactly(null, null, Long.toString(s));
        assertThat(w.received.get(2).getInitialEventsEnd()).isTrue();
        w.watcher.endWithError(Statuses.expired("test"));
        w.readAll();
        assertThat(sseIds(w)).as("no id on ERROR frames").endsWith((String) null);
    }

    @Test
    void aFailedFeedSendsAnErrorFrameToEveryOpenWatcher() throws Exception {
        newCore(100, 64);
        TestSink a = watch(KeyRange.prefix(key("/")), WatchEventEncodings.JSON, 0, false);
        core.feed().fail("undecodable record at offset 7");
        a.readAll();
        assertThat(a.received).hasSize(1);
        assertThat(a.received.get(0).getStatus().getCode()).isEqualTo(503);
        assertThat(a.received.get(0).getStatus().getMessage()).contains("offset 7");
        assertThat(core.readiness().isRebuilt()).isFalse();
    }

    @Test
    void concurrentFeedAndSlowReadersLoseAndRepeatNothingAcrossParkAndRejoin() throws Exception {
        newCore(100_000, 4);
        int readers = 6;
        List<TestSink> sinks = new ArrayList<>();
        for (int i = 0; i < readers; i++) {
            sinks.add(watch(
                    KeyRange.prefix(key(i % 2 == 0 ? "/" : "/odd/")),
                    (i % 2 == 0 ? WatchEventEncodings.JSON : WatchEventEncodings.PROTOBUF),
                    0,
                    false));
        }
        AtomicBoolean done = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (TestSink s : sinks) {
            Thread t = new Thread(() -> {
                int n = 0;
                while (!done.get() || s.read(64) > 0) {
                    if (s.read(1 + (n++ % 5)) == 0) {
                        Thread.onSpinWait();
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        List<Long> all = new ArrayList<>();
        List<Long> odd = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            boolean isOdd = i % 3 == 0;
            feed(etcd.put(isOdd ? "/odd/" + (i % 11) : "/even/" + (i % 13), "v" + i));
            all.add(etcd.revision());
            if (isOdd) {
                odd.add(etcd.revision());
            }
        }
        done.set(true);
        for (Thread t : threads) {
            t.join(30_000);
        }
        for (int i = 0; i < readers; i++) {
            sinks.get(i).readAll();
            assertThat(sinks.get(i).eventRevisions())
                    .as("reader %d", i)
                    .containsExactlyElementsOf(i % 2 == 0 ? all : odd);
        }
        assertThat(core.stats().parked()).as("the small queues forced parking").isPositive();
        Set<Long> encodes = new HashSet<>();
        encodes.add(core.frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT));
        assertThat(encodes).containsExactly(3000L);
    }

    @Test
    void anOlderHistoryWhoseFloorIsNotKnownYetRefusesNothingItMayHold() {
        // A node that just started and has not yet read the events topic's first record: only the
        // read that serves a watch from before the window can tell whether retention removed it.
        newCore(2, 16);
        for (int i = 0; i < 5; i++) {
            feed(etcd.put("/p/" + i, "v"));
        }
        assertThat(core.status().historyStartRevision()).isGreaterThan(101);
        long[] floor = {Long.MAX_VALUE};
        core.useOlderHistory(new OlderHistory() {
            @Override
            public long floorRevision() {
                return floor[0];
            }

            @Override
            public boolean canOpen(long afterRevision) {
                return true;
            }

            @Override
            public Cursor open(long afterRevision) {
                throw new UnsupportedOperationException();
            }

            @Override
            public java.util.concurrent.CompletableFuture<Long> revisionAt(java.time.Instant time) {
                throw new UnsupportedOperationException();
            }
        });
        assertThat(core.servableFromRevision()).isZero();
        floor[0] = 100;
        assertThat(core.servableFromRevision()).isEqualTo(100);
    }
}

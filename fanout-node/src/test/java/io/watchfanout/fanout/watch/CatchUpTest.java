package io.watchfanout.fanout.watch;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A watcher's pull on its own ({@link CatchUp#poll}), with the dispatcher it reads from: initial
 * events in batches of its queue's size closed by their bookmark, catch-up from the window in
 * whole revisions until it rejoins live dispatch, 410 when the window moved past its cursor, and
 * catch-up from older history (a fake) that waits, reads, ends, or refuses with 429.
 */
class CatchUpTest {
    private static final int QUEUE = 4;

    private final EtcdLog etcd = new EtcdLog(100);
    /** Every event fed, for the fake older history. */
    private final List<CachedEvent> fed = new ArrayList<>();

    private Dispatcher dispatcher;
    private CatchUp catchUp;
    private RecordFeed applier;

    private void start(int windowEvents) {
        dispatcher = new Dispatcher(
                CoreSettings.of(windowEvents, Duration.ofMinutes(10), QUEUE, "catch-up"), new FrameEncoder());
        dispatcher.startAt(100);
        dispatcher.markReady();
        catchUp = new CatchUp(dispatcher);
        applier = new RecordFeed(dispatcher, 100);
    }

    private void feed(List<EventsRecord> records) {
        for (EventsRecord r : records) {
            fed.add(new CachedEvent(r.getEvent(), 0));
            applier.accept(r);
        }
    }

    private void putMany(int n) {
        for (int i = 0; i < n; i++) {
            feed(etcd.put("/a/" + i, "v" + i));
        }
    }

    private Watcher open(WatchSpec.Builder spec) throws Exception {
        return dispatcher.open(spec.build(), () -> {});
    }

    private static WatchSpec.Builder spec() {
        return WatchSpec.of(KeyRange.prefix(key("/a/")), WatchEventEncodings.JSON);
    }

    /** One poll: the result, and the frames (decoded) into {@code got}. */
    private Watch.PollResult poll(Watcher w, List<WatchEvent> got) {
        List<ByteBuffer> out = new ArrayList<>();
        Watch.PollResult r = catchUp.poll(w, out, 100);
        for (ByteBuffer f : out) {
            got.add(Frames.decode(f, w.encoding()));
        }
        return r;
    }

    /** Polls until the watcher has nothing more now; returns the last result. */
    private Watch.PollResult pollAll(Watcher w, List<WatchEvent> got) {
        Watch.PollResult r;
        do {
            r = poll(w, got);
        } while (r == Watch.PollResult.FRAMES || r == Watch.PollResult.YIELD);
        return r;
    }

    private static List<Long> revisions(List<WatchEvent> events) {
        return events.stream().map(e -> e.getObject().getModRevision()).toList();
    }

    @Test
    void aWatcherCatchesUpFromTheWindowAtMostItsQueuePerStepThenGoesLive() throws Exception {
        start(1000);
        putMany(10);
        Watcher w = open(spec().from(100));
        List<WatchEvent> got = new ArrayList<>();

        assertThat(poll(w, got)).isEqualTo(Watch.PollResult.FRAMES);
        assertThat(got).as("one step: as many as its queue holds").hasSize(QUEUE);
        assertThat(w.isCatchingUp()).isTrue();

        assertThat(pollAll(w, got)).isEqualTo(Watch.PollResult.IDLE);
        assertThat(revisions(got)).containsExactly(101L, 102L, 103L, 104L, 105L, 106L, 107L, 108L, 109L, 110L);
        assertThat(w.isLive()).as("its cursor reached the cache's revision").isTrue();
        assertThat(dispatcher.stats().catchUpFromWindow()).isEqualTo(10);

        feed(etcd.put("/a/live", "x"));
        got.clear();
        assertThat(poll(w, got)).isEqualTo(Watch.PollResult.FRAMES);
        assertThat(revisions(got)).containsExactly(111L);
    }

    @Test
    void aParkedWatcherCatchesUpWhatItMissedAndRejoins() throws Exception {
        start(1000);
        Watcher w = open(spec());
        putMany(QUEUE + 3);
        assertThat(w.isCatchingUp()).as("parked").isTrue();
        List<WatchEvent> got = new ArrayList<>();
        assertThat(pollAll(w, got)).isEqualTo(Watch.PollResult.IDLE);
        assertThat(revisions(got)).containsExactly(101L, 102L, 103L, 104L, 105L, 106L, 107L);
        assertThat(w.isLive()).isTrue();
        assertThat(dispatcher.stats().unparked()).isEqualTo(1);
    }

    @Test
    void initialEventsComeInBatchesOfTheQueueThenTheirBookmarkThenLive() throws Exception {
        start(1000);
        putMany(6);
        feed(etcd.put("/a/0", "changed"));
        Watcher w = open(spec().initialEvents(true).bookmarks(true));
        List<WatchEvent> got = new ArrayList<>();

        assertThat(poll(w, got)).isEqualTo(Watch.PollResult.FRAMES);
        assertThat(got).hasSize(QUEUE);
        assertThat(pollAll(w, got)).isEqualTo(Watch.PollResult.IDLE);
        assertThat(got).extracting(WatchEvent::getType).containsOnly(WatchEvent.Type.ADDED, WatchEvent.Type.BOOKMARK);
        assertThat(got.subList(0, 6))
                .as("each key once, as it is now")
                .allMatch(e -> e.getType() == WatchEvent.Type.ADDED);
        assertThat(got.get(0).getObject().getValue().toStringUtf8()).isEqualTo("changed");
        WatchEvent end = got.get(6);
        assertThat(end.getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
        assertThat(end.getResourceVersion()).isEqualTo(107);
        assertThat(got).hasSize(7);
        assertThat(w.isLive()).isTrue();
    }

    @Test
    void aCursorTheWindowMovedPastWithoutOlderHistoryEndsWith410() throws Exception {
        start(3);
        feed(etcd.put("/a/first", "x"));
        Watcher w = open(spec().from(100));
        assertThat(w.isCatchingUp()).isTrue();
        putMany(5);
        List<WatchEvent> got = new ArrayList<>();
        assertThat(pollAll(w, got)).isEqualTo(Watch.PollResult.END);
        assertThat(got).hasSize(1);
        assertThat(got.get(0).getType()).isEqualTo(WatchEvent.Type.ERROR);
        assertThat(got.get(0).getStatus().getCode()).isEqualTo(410);
    }

    @Test
    void olderHistoryIsReadWhenTheCursorIsBeforeTheWindowWaitingWithoutAThread() throws Exception {
        start(3);
        FakeOlderHistory older = new FakeOlderHistory();
        dispatcher.expiry().useOlderHistory(older);
        putMany(8);
        Watcher w = open(spec().from(100));
        List<WatchEvent> got = new ArrayList<>();

        assertThat(poll(w, got)).as("nothing read yet").isEqualTo(Watch.PollResult.IDLE);
        assertThat(older.wakes).isNotNull();
        older.ready = true;
        assertThat(pollAll(w, got)).isEqualTo(Watch.PollResult.IDLE);
        assertThat(revisions(got)).containsExactly(101L, 102L, 103L, 104L, 105L, 106L, 107L, 108L);
        assertThat(w.isLive()).isTrue();
        assertThat(older.closed.get())
                .as("the read is left once the window serves")
                .isEqualTo(1);
        assertThat(dispatcher.stats().catchUpFromOlder()).isEqualTo(5);
    }

    @Test
    void aReadOfOlderHistoryTheNodeCannotStartEndsWith429() throws Exception {
        start(3);
        FakeOlderHistory older = new FakeOlderHistory();
        older.refuse = true;
        dispatcher.expiry().useOlderHistory(older);
        putMany(8);
        Watcher w = open(spec().from(100));
        List<WatchEvent> got = new ArrayList<>();
        assertThat(pollAll(w, got)).isEqualTo(Watch.PollResult.END);
        assertThat(got.get(0).getStatus().getCode()).isEqualTo(429);
    }

    /**
     * Older history over the events fed: waits until {@code ready}, then serves up to the start
     * of the window and ends there; or refuses every read.
     */
    private final class FakeOlderHistory implements OlderHistory {
        volatile boolean ready;
        volatile boolean refuse;
        volatile Runnable wakes;
        final AtomicInteger closed = new AtomicInteger();

        @Override
        public long floorRevision() {
            return 0;
        }

        @Override
        public boolean canOpen(long afterRevision) {
            return !refuse;
        }

        @Override
        public Cursor open(long afterRevision) throws TooManyReadsException {
            if (refuse) {
                throw new TooManyReadsException("no more reads of older history now");
            }
            return new Cursor() {
                long at = afterRevision;

                @Override
                public Step next(KeyRange range, int maxEvents, int maxScan, Runnable wake) {
                    if (!ready) {
                        wakes = wake;
                        return Step.waiting();
                    }
                    long windowStart = dispatcher.status().historyStartRevision();
                    if (at >= windowStart) {
                        return Step.end(at);
                    }
                    List<CachedEvent> events = new ArrayList<>();
                    for (CachedEvent e : fed) {
                        if (e.revision() > at && e.revision() <= windowStart && events.size() < maxEvents) {
                            events.add(e);
                        }
                    }
                    at = events.get(events.size() - 1).revision();
                    return Step.events(events, at);
                }

                @Override
                public void close() {
                    closed.incrementAndGet();
                }
            };
        }

        @Override
        public CompletableFuture<Long> revisionAt(Instant time) {
            return CompletableFuture.completedFuture(-1L);
        }
    }
}

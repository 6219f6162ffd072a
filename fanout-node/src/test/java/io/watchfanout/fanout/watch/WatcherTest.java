package io.watchfanout.fanout.watch;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * One watcher's state machine on its own, driven as the dispatcher, the catch-up and the
 * bookmark timer drive it: a bounded live queue that parks on overflow at the last revision
 * fully received, rejoining live only at the cache's revision, catch-up that never moves the
 * cursor back, bookmarks that never land after a later event, and its two endings.
 */
class WatcherTest {
    private static final int CAPACITY = 3;
    private final FrameEncoder encoder = new FrameEncoder();

    private static Watcher watcher(boolean bookmarks, long cursor) {
        WatchSpec spec = WatchSpec.of(KeyRange.prefix(key("/w/")), WatchEventEncodings.JSON)
                .bookmarks(bookmarks)
                .build();
        return new Watcher(spec, () -> {}, CAPACITY, cursor, null, null);
    }

    private static ByteBuffer frame(String name) {
        return ByteBuffer.wrap(name.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> drain(Watcher w) {
        List<ByteBuffer> out = new ArrayList<>();
        w.drain(out, 100);
        List<String> names = new ArrayList<>();
        for (ByteBuffer f : out) {
            names.add(StandardCharsets.UTF_8.decode(f.duplicate()).toString());
        }
        return names;
    }

    @Test
    void aLiveWatcherQueuesUpToItsCapacityThenParksAtTheLastRevisionItHasWhole() {
        Watcher w = watcher(false, 100);
        assertThat(w.goLiveLocked(100)).isEqualTo(Watcher.GoLive.LIVE);

        assertThat(w.offerLive(frame("101"), null, 101, 100, 0)).isEqualTo(Watcher.Offer.QUEUED_WAKE);
        assertThat(w.offerLive(null, List.of(frame("102a"), frame("102b")), 102, 101, 0))
                .as("a multi-event revision, queued whole")
                .isEqualTo(Watcher.Offer.QUEUED);
        assertThat(w.offerLive(frame("103"), null, 103, 102, 0))
                .as("a fourth frame does not fit")
                .isEqualTo(Watcher.Offer.PARKED);
        assertThat(w.isCatchingUp()).isTrue();
        assertThat(w.cursor())
                .as("everything up to 102 is queued, nothing of 103")
                .isEqualTo(102);
        assertThat(w.offerLive(frame("104"), null, 104, 103, 0))
                .as("not live any more")
                .isEqualTo(Watcher.Offer.NOT_QUEUED);
        assertThat(drain(w)).containsExactly("101", "102a", "102b");
    }

    @Test
    void aParkedWatcherRejoinsOnlyAtTheCachesRevisionAndSaysItWasParked() {
        Watcher w = watcher(false, 100);
        w.goLiveLocked(100);
        for (int rev = 101; rev <= 104; rev++) {
            w.offerLive(frame(Integer.toString(rev)), null, rev, rev - 1, 0);
        }
        assertThat(w.catchUpCursor()).isEqualTo(103);
        drain(w);

        assertThat(w.goLiveLocked(110)).as("behind the cache").isEqualTo(Watcher.GoLive.NO);
        w.addCatchUp(List.of(frame("104..110")), 110);
        assertThat(w.goLiveLocked(110)).isEqualTo(Watcher.GoLive.LIVE_AFTER_PARKING);
        assertThat(w.isLive()).isTrue();
        assertThat(w.catchUpCursor()).as("not catching up").isEqualTo(-1);
        w.offerLive(frame("111"), null, 111, 110, 0);
        assertThat(drain(w)).containsExactly("104..110", "111");
    }

    @Test
    void catchUpNeverMovesTheCursorBackNorQueuesOnceLive() {
        Watcher w = watcher(false, 100);
        w.addCatchUp(List.of(frame("101..105")), 105);
        w.addCatchUp(List.of(frame("stale")), 103);
        assertThat(w.cursor()).isEqualTo(105);
        w.goLiveLocked(105);
        w.addCatchUp(List.of(frame("late")), 106);
        assertThat(drain(w)).containsExactly("101..105");
        assertThat(w.cursor()).isEqualTo(105);
    }

    @Test
    void aBookmarkIsNotQueuedOnceAnythingMovedOrTheQueueIsFull() {
        Watcher w = watcher(true, 100);
        w.goLiveLocked(100);
        long rev = w.tickRevision(107, false);
        assertThat(rev).as("live: everything up to the dispatched revision").isEqualTo(107);
        w.offerLive(frame("108"), null, 108, 107, 0);
        assertThat(w.addBookmark(frame("bookmark@107"), rev, 108))
                .as("it would land after 108's event")
                .isEqualTo(Watcher.Offer.NOT_QUEUED);
        assertThat(w.addBookmark(frame("bookmark@108"), 108, 108)).isEqualTo(Watcher.Offer.QUEUED);
        w.offerLive(frame("109"), null, 109, 108, 0);
        assertThat(w.tickRevision(109, false)).as("the queue is full").isZero();
        assertThat(drain(w)).containsExactly("108", "bookmark@108", "109");
    }

    @Test
    void progressGoesToQuietWatchersOnly() {
        Watcher w = watcher(true, 100);
        w.goLiveLocked(100);
        w.offerLive(frame("101"), null, 101, 100, 0);
        drain(w);
        assertThat(w.tickRevision(101, true)).as("events since the last tick").isZero();
        assertThat(w.tickRevision(101, true)).as("quiet since").isEqualTo(101);
        assertThat(watcher(false, 100).tickRevision(101, false))
                .as("bookmarks not allowed")
                .isZero();
    }

    @Test
    void finishingQueuesAFinalBookmarkAfterWhatIsQueuedThenTheWatcherIsDone() {
        Watcher w = watcher(true, 100);
        w.goLiveLocked(100);
        w.offerLive(frame("101"), null, 101, 100, 0);
        assertThat(w.finish(encoder, 102)).isEqualTo(Watcher.Finish.ENDED_WITH_BOOKMARK);
        assertThat(w.finish(encoder, 102)).isEqualTo(Watcher.Finish.ALREADY_ENDING);
        assertThat(w.isEnding()).isTrue();
        List<ByteBuffer> out = new ArrayList<>();
        w.drain(out, 100);
        assertThat(out).hasSize(2);
        WatchEvent last = Frames.decode(out.get(1), WatchEventEncodings.JSON);
        assertThat(last.getType()).isEqualTo(WatchEvent.Type.BOOKMARK);
        assertThat(last.getResourceVersion())
                .as("everything dispatched up to it")
                .isEqualTo(102);
        assertThat(w.phaseIfEmpty()).isEqualTo(Watcher.Phase.DONE);
        assertThat(watcher(false, 100).finish(encoder, 102)).as("no bookmarks").isEqualTo(Watcher.Finish.ENDED);
    }

    @Test
    void anErrorEndingDropsWhatIsQueuedAndHappensOnce() {
        Watcher w = watcher(false, 100);
        w.goLiveLocked(100);
        w.offerLive(frame("101"), null, 101, 100, 0);
        assertThat(w.endWith(frame("error"))).isTrue();
        assertThat(w.endWith(frame("error again"))).isFalse();
        assertThat(w.phaseIfEmpty()).as("the error is waiting").isNull();
        assertThat(drain(w)).containsExactly("error");
        assertThat(w.phaseIfEmpty()).isEqualTo(Watcher.Phase.DONE);
        w.markDone();
        assertThat(w.offerLive(frame("102"), null, 102, 101, 0)).isEqualTo(Watcher.Offer.NOT_QUEUED);
    }

    @Test
    void initialEventsComeFirstThenTheWatcherCatchesUpFromTheirRevision() {
        WatchSpec spec = WatchSpec.of(KeyRange.prefix(key("/w/")), WatchEventEncodings.JSON)
                .initialEvents(true)
                .build();
        Watcher w = new Watcher(spec, () -> {}, CAPACITY, 100, List.of(), frame("start"));
        assertThat(w.phaseIfEmpty()).as("the start bookmark waits").isNull();
        assertThat(drain(w)).containsExactly("start");
        assertThat(w.phaseIfEmpty()).isEqualTo(Watcher.Phase.INITIAL);
        assertThat(w.addInitial(List.of(frame("a")), false, null)).isTrue();
        assertThat(w.catchUpCursor()).as("still sending initial events").isEqualTo(-1);
        assertThat(w.addInitial(List.of(frame("b")), true, frame("end"))).isTrue();
        assertThat(w.catchUpCursor()).isEqualTo(100);
        assertThat(w.addInitial(List.of(frame("c")), true, null)).as("over").isFalse();
        assertThat(drain(w)).containsExactly("a", "b", "end");
    }
}

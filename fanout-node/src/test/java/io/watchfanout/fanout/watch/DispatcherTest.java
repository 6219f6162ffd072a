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
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The dispatcher on its own, fed as the Kafka side feeds it and read as the watchers' queues
 * (no catch-up, no transport): who is live, what each revision offers to whom and in what
 * encoding, parking on overflow, revision waiters, and what a resync and a failure end.
 */
class DispatcherTest {
    private static final int QUEUE = 4;

    private final EtcdLog etcd = new EtcdLog(100);
    private Dispatcher dispatcher;
    private RecordFeed applier;

    @BeforeEach
    void start() {
        dispatcher =
                new Dispatcher(CoreSettings.of(1000, Duration.ofMinutes(10), QUEUE, "dispatch"), new FrameEncoder());
        dispatcher.startAt(100);
        dispatcher.markReady();
        applier = new RecordFeed(dispatcher, 100);
    }

    private void feed(List<EventsRecord> records) {
        records.forEach(applier::accept);
    }

    /** A sink that counts its wake-ups. */
    private static final class Wakes implements WatchSink {
        final AtomicInteger count = new AtomicInteger();

        @Override
        public void wakeUp() {
            count.incrementAndGet();
        }
    }

    private Watcher open(String prefix, Encoding encoding, long from, WatchSink sink) throws Exception {
        return dispatcher.open(
                WatchSpec.of(KeyRange.prefix(key(prefix)), encoding).from(from).build(), sink);
    }

    private Watcher open(String prefix) throws Exception {
        return open(prefix, WatchEventEncodings.JSON, 0, () -> {});
    }

    private static List<WatchEvent> drain(Watcher w) {
        List<ByteBuffer> out = new ArrayList<>();
        w.drain(out, 100);
        List<WatchEvent> events = new ArrayList<>();
        for (ByteBuffer f : out) {
            events.add(Frames.decode(f, w.encoding()));
        }
        return events;
    }

    private static List<String> keys(List<WatchEvent> events) {
        return events.stream().map(e -> e.getObject().getKey().toStringUtf8()).toList();
    }

    @Test
    void aWatcherFromNowIsLiveAtOnceAndOneFromBeforeCatchesUp() throws Exception {
        feed(etcd.put("/a/1", "x"));
        Watcher now = open("/a/");
        Watcher before = open("/a/", WatchEventEncodings.JSON, 100, () -> {});
        assertThat(now.isLive()).isTrue();
        assertThat(before.isCatchingUp()).isTrue();
        assertThat(dispatcher.liveWatcherCount()).isEqualTo(1);
        assertThat(dispatcher.watchers().count()).isEqualTo(2);
        assertThatThrownBy(() -> open("/a/", WatchEventEncodings.JSON, 150, () -> {}))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ahead of the cache");
    }

    @Test
    void aRevisionGoesToTheWatchersOfItsKeysOnlyEachEncodingBuiltOnce() throws Exception {
        Wakes wakes = new Wakes();
        List<Watcher> json = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            json.add(open("/a/", WatchEventEncodings.JSON, 0, wakes));
        }
        Watcher proto = open("/a/", WatchEventEncodings.PROTOBUF, 0, wakes);
        Watcher other = open("/b/");

        feed(etcd.put("/a/1", "x"));
        feed(etcd.put("/a/2", "y"));

        for (Watcher w : json) {
            assertThat(keys(drain(w))).containsExactly("/a/1", "/a/2");
        }
        assertThat(keys(drain(proto)))
                .as("the shared frame of one event is never the previous event's")
                .containsExactly("/a/1", "/a/2");
        assertThat(drain(other)).isEmpty();
        FrameEncoder enc = dispatcher.encoder();
        assertThat(enc.encodes(WatchEventEncodings.JSON, FrameKind.EVENT)).isEqualTo(2);
        assertThat(enc.encodes(WatchEventEncodings.PROTOBUF, FrameKind.EVENT)).isEqualTo(2);
        assertThat(wakes.count.get())
                .as("each watcher once: the second event found its queue holding the first")
                .isEqualTo(6);
    }

    @Test
    void aMultiEventRevisionReachesAWatcherWholeWithItsMatchingEventsOnly() throws Exception {
        Watcher a = open("/a/");
        Watcher b = open("/b/");
        feed(etcd.txn(EtcdLog.Op.put("/a/1", "x"), EtcdLog.Op.put("/b/1", "y"), EtcdLog.Op.put("/a/2", "z")));
        assertThat(a.queued()).isEqualTo(2);
        assertThat(keys(drain(a))).containsExactly("/a/1", "/a/2");
        assertThat(keys(drain(b))).containsExactly("/b/1");
        assertThat(a.cursor()).isEqualTo(etcd.revision());
    }

    @Test
    void aWatcherThatOverflowsIsParkedLeavesTheIndexAndIsWoken() throws Exception {
        Wakes wakes = new Wakes();
        Watcher slow = open("/a/", WatchEventEncodings.JSON, 0, wakes);
        Watcher fast = open("/a/");
        for (int i = 0; i < QUEUE; i++) {
            feed(etcd.put("/a/" + i, "x"));
            drain(fast);
        }
        long full = etcd.revision();
        feed(etcd.put("/a/more", "x"));

        assertThat(slow.isCatchingUp()).isTrue();
        assertThat(slow.cursor()).as("the last revision it has whole").isEqualTo(full);
        assertThat(dispatcher.stats().parked()).isEqualTo(1);
        assertThat(dispatcher.liveWatcherCount()).as("only the fast one").isEqualTo(1);
        assertThat(wakes.count.get())
                .as("woken by its first frame and by the parking")
                .isEqualTo(2);
        assertThat(keys(drain(fast))).containsExactly("/a/more");
        assertThat(drain(slow)).hasSize(QUEUE);
    }

    @Test
    void aRevisionWaiterIsDueOnceTheCacheReachesItsRevisionUnlessRemoved() {
        AtomicInteger reached = new AtomicInteger();
        assertThat(dispatcher.addWaiter(new RevisionWaiter(100, reached::incrementAndGet)))
                .as("due now: the caller completes it")
                .isFalse();
        RevisionWaiter next = new RevisionWaiter(102, reached::incrementAndGet);
        RevisionWaiter removed = new RevisionWaiter(102, reached::incrementAndGet);
        assertThat(dispatcher.addWaiter(next)).isTrue();
        assertThat(dispatcher.addWaiter(removed)).isTrue();
        dispatcher.removeWaiter(removed);
        feed(etcd.put("/a/1", "x"));
        assertThat(reached.get()).isZero();
        feed(etcd.put("/a/2", "x"));
        assertThat(reached.get()).isEqualTo(1);
        dispatcher.applyProgress(110);
        assertThat(dispatcher.addWaiter(new RevisionWaiter(110, reached::incrementAndGet)))
                .as("progress moves the revision too")
                .isFalse();
    }

    @Test
    void aResyncEndsEveryOpenWatcherWith410AndAFailureWith503() throws Exception {
        Watcher live = open("/a/");
        Watcher catchingUp = open("/a/", WatchEventEncodings.JSON, 100, () -> {});
        feed(etcd.put("/a/1", "x"));
        dispatcher.applyResync(200, List.of());
        for (Watcher w : List.of(live, catchingUp)) {
            List<WatchEvent> got = drain(w);
            assertThat(got).hasSize(1);
            assertThat(got.get(0).getType()).isEqualTo(WatchEvent.Type.ERROR);
            assertThat(got.get(0).getStatus().getCode()).isEqualTo(410);
        }
        assertThat(dispatcher.stats().endedByResync()).isEqualTo(2);

        Watcher after = open("/a/");
        AtomicInteger reached = new AtomicInteger();
        dispatcher.addWaiter(new RevisionWaiter(300, reached::incrementAndGet));
        dispatcher.fail("the events topic is gone");
        assertThat(drain(after).get(0).getStatus().getCode()).isEqualTo(503);
        assertThat(reached.get()).as("waiters are told, and ask readiness").isEqualTo(1);
        assertThat(dispatcher.addWaiter(new RevisionWaiter(400, () -> {})))
                .as("nothing waits on a failed node")
                .isFalse();
    }

    @Test
    void closingForgetsTheWatcherAndStopsItsDispatch() throws Exception {
        Watcher w = open("/a/");
        dispatcher.close(w);
        feed(etcd.put("/a/1", "x"));
        assertThat(w.queued()).isZero();
        assertThat(dispatcher.liveWatcherCount()).isZero();
        assertThat(dispatcher.watchers().count()).isZero();
    }
}

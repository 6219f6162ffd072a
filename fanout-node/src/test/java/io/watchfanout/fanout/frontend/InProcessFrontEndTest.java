package io.watchfanout.fanout.frontend;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSink;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A second front end on the watch core, in-process and without HTTP: a sink that pulls frames on
 * a thread of its own whenever it is woken, as a transport does, using only the core's public
 * surface ({@link WatchCore}, {@link Watch}, {@link WatchSpec}, {@link WatchSink}). It gets the
 * same watch semantics as the HTTP streams: initial events, catch-up from the window, parking of
 * a reader that stops and its return, 410 Expired, and bookmarks from the core's timer.
 */
class InProcessFrontEndTest {
    private final EtcdLog etcd = new EtcdLog(100);
    private final List<RecordingFrontEnd> opened = new ArrayList<>();
    private WatchCore core;
    private RecordFeed applier;

    private void start(int historyMaxEvents, int queueFrames, Duration bookmarkInterval) {
        core = new WatchCore(
                CoreSettings.of(historyMaxEvents, Duration.ofMinutes(10), queueFrames, "in-process")
                        .withBookmarkInterval(bookmarkInterval),
                new FrameEncoder());
        core.start();
        core.feed().startAt(100);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), 100);
    }

    @AfterEach
    void stop() {
        opened.forEach(RecordingFrontEnd::close);
        if (core != null) {
            core.close();
        }
    }

    private void feed(List<EventsRecord> records) {
        records.forEach(applier::accept);
    }

    private RecordingFrontEnd open(WatchSpec spec) throws Exception {
        RecordingFrontEnd fe = new RecordingFrontEnd();
        fe.watch = core.watch(spec, fe);
        opened.add(fe);
        fe.wakeUp();
        return fe;
    }

    @Test
    void initialEventsThenTheirBookmarkThenLiveEvents() throws Exception {
        start(1000, 64, Duration.ofHours(1));
        feed(etcd.put("/p/a", "1"));
        feed(etcd.put("/p/b", "1"));
        long listed = etcd.revision();
        RecordingFrontEnd fe = open(WatchSpec.of(KeyRange.prefix(key("/p/")), WatchEventEncodings.JSON)
                .initialEvents(true)
                .build());
        feed(etcd.put("/p/c", "1"));
        await().until(() -> fe.frames().size() == 4);
        List<WatchEvent> got = fe.frames();
        assertThat(got)
                .extracting(WatchEvent::getType)
                .containsExactly(
                        WatchEvent.Type.ADDED, WatchEvent.Type.ADDED, WatchEvent.Type.BOOKMARK, WatchEvent.Type.ADDED);
        assertThat(got.get(2).getInitialEventsEnd()).isTrue();
        assertThat(got.get(2).getResourceVersion()).isEqualTo(listed);
        assertThat(got.get(3).getResourceVersion()).isEqualTo(etcd.revision());
    }

    @Test
    void catchUpFromTheWindowThenLiveWithoutGapOrRepeat() throws Exception {
        start(1000, 64, Duration.ofHours(1));
        for (int i = 0; i < 100; i++) {
            feed(etcd.put("/k/" + (i % 7), "v" + i));
        }
        RecordingFrontEnd fe = open(WatchSpec.of(KeyRange.prefix(key("/k/")), WatchEventEncodings.PROTOBUF)
                .from(150)
                .build());
        for (int i = 0; i < 20; i++) {
            feed(etcd.put("/k/" + i, "w" + i));
        }
        await().until(() -> fe.frames().size() == 70);
        assertThat(fe.frames())
                .extracting(WatchEvent::getResourceVersion)
                .containsExactlyElementsOf(
                        LongStream.rangeClosed(151, etcd.revision()).boxed().toList());
        assertThat(fe.watch.isLive()).isTrue();
    }

    @Test
    void aFrontEndThatStopsPullingIsParkedAndCatchesUpWhenItPullsAgain() throws Exception {
        start(1000, 4, Duration.ofHours(1));
        RecordingFrontEnd fe = open(WatchSpec.of(KeyRange.prefix(key("/")), WatchEventEncodings.JSON)
                .build());
        await().until(() -> fe.watch.isLive());
        fe.paused.set(true);
        for (int i = 0; i < 50; i++) {
            feed(etcd.put("/x/" + i, "v"));
        }
        assertThat(core.stats().parked()).isEqualTo(1);
        assertThat(fe.watch.isCatchingUp()).isTrue();
        fe.paused.set(false);
        fe.wakeUp();
        await().until(() -> fe.frames().size() == 50 && fe.watch.isLive());
        assertThat(fe.frames())
                .extracting(WatchEvent::getResourceVersion)
                .containsExactlyElementsOf(
                        LongStream.rangeClosed(101, 150).boxed().toList());
        assertThat(core.stats().unparked()).isEqualTo(1);
    }

    @Test
    void aWatchFromBeforeTheWindowAndAReaderLeftBehindItGet410() throws Exception {
        start(10, 4, Duration.ofMillis(50));
        RecordingFrontEnd fe = open(WatchSpec.of(KeyRange.prefix(key("/")), WatchEventEncodings.PROTOBUF)
                .build());
        await().until(() -> fe.watch.isLive());
        fe.paused.set(true);
        for (int i = 0; i < 30; i++) {
            feed(etcd.put("/y/" + i, "v"));
        }
        assertThatThrownBy(() -> core.watch(
                        WatchSpec.of(KeyRange.prefix(key("/")), WatchEventEncodings.JSON)
                                .from(101)
                                .build(),
                        () -> {}))
                .isInstanceOf(HistoryExpiredException.class);
        // The core's timer ends the parked watcher whose cursor fell behind the window, pulled or not.
        await().until(() -> fe.watch.isEnding());
        fe.paused.set(false);
        fe.wakeUp();
        await().until(() -> fe.ended);
        WatchEvent last = fe.frames().get(fe.frames().size() - 1);
        assertThat(last.getType()).isEqualTo(WatchEvent.Type.ERROR);
        assertThat(last.getStatus().getCode()).isEqualTo(410);
        assertThat(core.status().watcherCount()).isZero();
    }

    @Test
    void theCoresTimerSendsBookmarksAtTheRevisionTheWatchHasEverythingUpTo() throws Exception {
        start(1000, 64, Duration.ofMillis(50));
        RecordingFrontEnd fe = open(WatchSpec.of(KeyRange.prefix(key("/quiet/")), WatchEventEncodings.JSON)
                .bookmarks(true)
                .build());
        feed(etcd.put("/busy", "v"));
        applier.accept(etcd.progress());
        await().until(() -> fe.frames().stream()
                .anyMatch(e -> e.getType() == WatchEvent.Type.BOOKMARK && e.getResourceVersion() == etcd.revision()));
        assertThat(fe.frames()).extracting(WatchEvent::getType).containsOnly(WatchEvent.Type.BOOKMARK);
    }

    /** The front end: pulls on its own thread whenever woken, unless paused (a reader that stops). */
    private static final class RecordingFrontEnd implements WatchSink {
        private final ExecutorService thread = Executors.newSingleThreadExecutor();
        private final List<WatchEvent> frames = new ArrayList<>();
        private final List<ByteBuffer> polled = new ArrayList<>();
        final AtomicBoolean paused = new AtomicBoolean();
        volatile Watch watch;
        volatile boolean ended;

        @Override
        public void wakeUp() {
            thread.execute(this::pull);
        }

        private void pull() {
            while (!paused.get() && !ended) {
                polled.clear();
                Watch.PollResult r = watch.poll(polled, 16);
                synchronized (frames) {
                    for (ByteBuffer f : polled) {
                        frames.add(Frames.decode(f, watch.spec().encoding()));
                    }
                }
                if (r == Watch.PollResult.END) {
                    ended = true;
                    watch.close();
                } else if (r == Watch.PollResult.IDLE) {
                    return;
                }
            }
        }

        List<WatchEvent> frames() {
            synchronized (frames) {
                return List.copyOf(frames);
            }
        }

        void close() {
            watch.close();
            thread.shutdownNow();
        }
    }
}

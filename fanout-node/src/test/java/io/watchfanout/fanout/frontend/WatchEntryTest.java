package io.watchfanout.fanout.frontend;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.watch.Arrival;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.Opening;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSpec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The core's one entry to a watch and to a read at a revision ({@link WatchCore#open},
 * {@link WatchCore#awaitRevision(long, Duration, Executor, java.util.function.Consumer)}): each
 * outcome typed, delivered once on the front end's executor, and a cancelled wait never answers.
 */
class WatchEntryTest {
    private final EtcdLog etcd = new EtcdLog(100);
    private final AtomicInteger executed = new AtomicInteger();
    private final Executor frontEnd = r -> {
        executed.incrementAndGet();
        r.run();
    };
    private WatchCore core;
    private RecordFeed applier;

    @BeforeEach
    void start() {
        core = new WatchCore(CoreSettings.of(3, Duration.ofMinutes(10), 64, "entry"), new FrameEncoder());
        core.feed().startAt(100);
        applier = new RecordFeed(core.feed(), 100);
    }

    @AfterEach
    void stop() {
        core.close();
    }

    private WatchSpec from(long rv) {
        return WatchSpec.of(KeyRange.prefix(key("/k/")), WatchEventEncodings.JSON)
                .from(rv)
                .build();
    }

    @Test
    void aNodeThatDoesNotServeRefusesAtOnce() {
        List<Opening> got = new CopyOnWriteArrayList<>();
        core.open(from(0), () -> {}, Duration.ofSeconds(5), frontEnd, got::add);
        assertThat(got).singleElement().satisfies(o -> {
            assertThat(o.outcome()).isEqualTo(Opening.Outcome.NOT_READY);
            assertThat(o.status().getCode()).isEqualTo(503);
        });
        assertThat(executed).hasValue(1);
    }

    @Test
    void aFutureRevisionIsWaitedForThenOpened() {
        core.feed().markReady();
        List<Opening> got = new CopyOnWriteArrayList<>();
        core.open(from(101), () -> {}, Duration.ofMinutes(1), frontEnd, got::add);
        assertThat(got).isEmpty();
        etcd.put("/k/a", "1").forEach(applier::accept);
        assertThat(got).singleElement().satisfies(o -> assertThat(o.opened()).isTrue());
        got.get(0).watch().close();
    }

    @Test
    void aFutureRevisionNotReachedInTimeIsTimedOutNamingBothRevisions() {
        core.feed().markReady();
        List<Arrival> got = new CopyOnWriteArrayList<>();
        core.awaitRevision(500, Duration.ofMillis(50), frontEnd, got::add);
        await().until(() -> !got.isEmpty());
        assertThat(got).singleElement().satisfies(a -> {
            assertThat(a.outcome()).isEqualTo(Arrival.Outcome.TIMED_OUT);
            assertThat(a.status().getCode()).isEqualTo(504);
            assertThat(a.status().getMessage()).contains("resourceVersion 500", "revision 100");
        });
    }

    @Test
    void aCancelledWaitNeverAnswers() throws Exception {
        core.feed().markReady();
        List<Arrival> got = new CopyOnWriteArrayList<>();
        Runnable cancel = core.awaitRevision(101, Duration.ofMillis(100), frontEnd, got::add);
        cancel.run();
        etcd.put("/k/a", "1").forEach(applier::accept);
        Thread.sleep(300); // past the deadline: neither the revision nor the timer answers
        assertThat(got).isEmpty();
        assertThat(executed).hasValue(0);
    }

    @Test
    void aRevisionBeforeTheHistoryIsExpired() {
        core.feed().markReady();
        for (int i = 0; i < 10; i++) {
            etcd.put("/k/a", "v" + i).forEach(applier::accept);
        }
        Opening o = core.openNow(from(101), () -> {});
        assertThat(o.outcome()).isEqualTo(Opening.Outcome.EXPIRED);
        assertThat(o.status().getCode()).isEqualTo(410);
    }

    @Test
    void aNodeThatFailsWhileWaitingAnswersNotReady() {
        core.feed().markReady();
        List<Arrival> got = new CopyOnWriteArrayList<>();
        core.awaitRevision(200, null, frontEnd, got::add);
        core.feed().fail("a record could not be decoded");
        assertThat(got).singleElement().satisfies(a -> {
            assertThat(a.outcome()).isEqualTo(Arrival.Outcome.NOT_READY);
            assertThat(a.status().getMessage()).contains("could not be decoded");
        });
    }
}

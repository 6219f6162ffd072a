package io.watchfanout.ingester.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdWorkload;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link EtcdWatchFeed#wakeUp}: a publisher waiting for the watch sees the ingester's stop at
 * once, whatever its poll's timeout; signals already queued are still handed out.
 */
@ExtendWith(EtcdExtension.class)
class EtcdWatchFeedWakeUpTest {
    private static final Duration A_DAY = Duration.ofDays(1);

    @Test
    void aWaitingPollReturnsOnWakeUpAndLaterPollsDoNotWait(Client etcd) throws Exception {
        try (EtcdWatchFeed feed = new EtcdWatchFeed(etcd, 1 << 20)) {
            feed.watchFrom(EtcdWorkload.currentRevision(etcd) + 1);
            CompletableFuture<WatchSignal> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return feed.poll(A_DAY);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            feed.wakeUp();
            // The bound only keeps a broken wake-up from hanging the build; the poll asked for a day.
            assertThat(waiting.get(60, TimeUnit.SECONDS)).isNull();
            assertThat(feed.poll(A_DAY)).isNull();

            long revision = etcd.getKVClient()
                    .put(EtcdWorkload.bytes("/wake-up/a"), EtcdWorkload.bytes("1"))
                    .get(10, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
            // Progress notifications may come first; the put's events come all the same.
            AtomicReference<WatchBatch> events = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                if (feed.poll(Duration.ZERO) instanceof WatchSignal.Batch b
                        && !b.batch().events().isEmpty()) {
                    events.set(b.batch());
                }
                return events.get() != null;
            });
            assertThat(events.get().headerRevision()).isEqualTo(revision);
        }
    }
}

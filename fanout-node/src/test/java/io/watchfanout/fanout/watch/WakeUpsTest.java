package io.watchfanout.fanout.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

class WakeUpsTest {
    @Test
    void wakeUpsBeforeARunShareOneTask() {
        List<Runnable> tasks = new ArrayList<>();
        List<String> pumped = new ArrayList<>();
        WakeUps<String> wakeUps = new WakeUps<>(tasks::add, pumped::add);

        wakeUps.wake("a");
        wakeUps.wake("b");
        wakeUps.wake("c");
        assertThat(tasks).hasSize(1);

        tasks.remove(0).run();
        assertThat(pumped).containsExactly("a", "b", "c");

        wakeUps.wake("d");
        assertThat(tasks).hasSize(1);
        tasks.remove(0).run();
        assertThat(pumped).containsExactly("a", "b", "c", "d");
    }

    @Test
    void aFailingPumpDoesNotStopTheOthersOfItsBatch() {
        List<Runnable> tasks = new ArrayList<>();
        List<String> pumped = new ArrayList<>();
        WakeUps<String> wakeUps = new WakeUps<>(tasks::add, s -> {
            if (s.equals("bad")) {
                throw new IllegalStateException("pump failed");
            }
            pumped.add(s);
        });

        wakeUps.wake("a");
        wakeUps.wake("bad");
        wakeUps.wake("b");
        tasks.remove(0).run();

        assertThat(pumped).containsExactly("a", "b");
        wakeUps.wake("c");
        assertThat(tasks).hasSize(1);
    }

    @Test
    void aStoppedThreadRefusesQuietly() {
        List<String> pumped = new ArrayList<>();
        WakeUps<String> wakeUps = new WakeUps<>(
                task -> {
                    throw new RejectedExecutionException("stopped");
                },
                pumped::add);

        wakeUps.wake("a");
        wakeUps.wake("b");

        assertThat(pumped).isEmpty();
    }

    @Test
    void aSlicedBatchGoesOnBehindTheTasksItsSliceQueued() {
        List<Runnable> tasks = new ArrayList<>();
        List<String> pumped = new ArrayList<>();
        WakeUps<String> wakeUps = new WakeUps<>(
                tasks::add,
                s -> {
                    pumped.add(s);
                    // What a stream's write queues on its thread (a transport's flush).
                    tasks.add(() -> pumped.add("flush after " + s));
                },
                2);
        for (String s : List.of("a", "b", "c", "d", "e")) {
            wakeUps.wake(s);
        }
        assertThat(tasks).hasSize(1);

        while (!tasks.isEmpty()) {
            tasks.remove(0).run();
            if (pumped.size() == 3) {
                // Woken while the batch is being pumped: the next batch.
                wakeUps.wake("f");
            }
        }
        assertThat(pumped)
                .containsExactly(
                        "a",
                        "b",
                        "flush after a",
                        "flush after b",
                        "c",
                        "d",
                        "flush after c",
                        "flush after d",
                        "e",
                        "flush after e",
                        "f",
                        "flush after f");
    }
}

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
}

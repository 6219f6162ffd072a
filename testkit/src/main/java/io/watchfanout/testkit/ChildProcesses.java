package io.watchfanout.testkit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Registry of every child process the testkit started, with a JVM shutdown hook that kills
 * (SIGKILL) those still alive, and their descendants, when the JVM exits — so that a test JVM
 * leaves no etcd or Kafka behind even when a test forgot to close its server.
 *
 * <p>Thread-safe.
 */
final class ChildProcesses {
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();
    private static boolean hookInstalled; // guarded by ChildProcesses.class

    private ChildProcesses() {}

    /** Tracks {@code process} until it exits. */
    static void register(Process process) {
        installHook();
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
    }

    private static synchronized void installHook() {
        if (!hookInstalled) {
            Runtime.getRuntime().addShutdownHook(new Thread(ChildProcesses::killAll, "testkit-child-reaper"));
            hookInstalled = true;
        }
    }

    private static void killAll() {
        for (Process process : LIVE) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        for (Process process : LIVE) {
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}

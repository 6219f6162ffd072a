package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class JavaProcessTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Test
    void passesArgsEnvAndHeapAndKillsWithSigkill() throws Exception {
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName())
                .args("one", "two")
                .env("TESTKIT_GREETING", "hi")
                .maxHeap("64m")
                .start()) {
            assertThat(child.awaitLog("ready", TIMEOUT)).isEqualTo("ready");
            assertThat(child.pid())
                    .isPositive()
                    .isNotEqualTo(ProcessHandle.current().pid());
            String log = Files.readString(child.logFile());
            assertThat(log).contains("args=one,two").contains("env=hi");
            assertThat(child.awaitLog("maxHeapMiB=", TIMEOUT)).matches("maxHeapMiB=(5\\d|6\\d)");

            child.kill();
            assertThat(child.isAlive()).isFalse();
            assertThat(child.exitCode()).hasValue(137);
            assertThat(child.logTail(3)).doesNotContain("shutdown hook ran");
        }
    }

    @Test
    void childrenGetTheTestRunsJvmOptionsBeforeTheirOwn() {
        List<String> options = ManagedProcess.childJvmOptions();
        assertThat(options).as("set by the root pom's test runs").containsExactly("-XX:TieredStopAtLevel=1");
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName())
                .jvmArg("-XX:TieredStopAtLevel=4")
                .start()) {
            assertThat(child.awaitLog("ready", TIMEOUT)).isEqualTo("ready");
            List<String> cmd = List.of(ProcessHandle.of(child.pid())
                    .flatMap(h -> h.info().arguments())
                    .orElseThrow());
            assertThat(cmd).containsSubsequence("-XX:TieredStopAtLevel=1", "-XX:TieredStopAtLevel=4");
        }
    }

    @Test
    void stopSendsSigtermSoShutdownHooksRun() {
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName()).start()) {
            child.awaitLog("ready", TIMEOUT);
            assertThat(child.stop()).isEqualTo(143);
            assertThat(child.logTail(1)).isEqualTo("shutdown hook ran");
        }
    }

    @Test
    void awaitLogFailsFastWhenTheProcessExits() {
        try (JavaProcess child =
                JavaProcess.builder(ChildMain.class.getName()).args("exit", "3").start()) {
            assertThatThrownBy(() -> child.awaitLog("never printed", TIMEOUT))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited (code 3)")
                    .hasMessageContaining(child.logFile().toString())
                    .hasMessageContaining("exiting");
            assertThat(child.exitCode()).hasValue(3);
        }
    }

    @Test
    void awaitLogTimesOutWithTheLogTail() {
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName()).start()) {
            child.awaitLog("ready", TIMEOUT);
            assertThatThrownBy(() -> child.awaitLog("never printed", Duration.ofMillis(300)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("did not log 'never printed' within 300 ms")
                    .hasMessageContaining("ready");
        }
    }

    @Test
    void childProcessesDieWithTheJvmThatStartedThem() {
        long etcdPid;
        Path etcdDir;
        try (JavaProcess child =
                JavaProcess.builder(ChildMain.class.getName()).args("etcd").start()) {
            String line = child.awaitLog("etcd dir=", TIMEOUT);
            etcdDir = Path.of(line.substring("etcd dir=".length(), line.indexOf(" pid=")));
            etcdPid = Long.parseLong(
                    line.substring(line.indexOf(" pid=") + " pid=".length()).trim());
            assertThat(ProcessHandle.of(etcdPid).map(ProcessHandle::isAlive)).hasValue(true);
            child.stop(); // SIGTERM: the child JVM exits without closing its etcd
        }
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        Optional<ProcessHandle> etcd = ProcessHandle.of(etcdPid);
        while (etcd.isPresent() && etcd.get().isAlive() && System.nanoTime() < deadline) {
            etcd = ProcessHandle.of(etcdPid);
        }
        assertThat(etcd.map(ProcessHandle::isAlive)).as("etcd left behind").isNotEqualTo(Optional.of(true));
        assertThat(etcdDir).isDirectory();
        WorkDirs.deleteRecursively(etcdDir); // its data (~120 MB of preallocated WAL) was never closed
    }

    @Test
    void ownSessionKeepsThePidAndLeavesThisProcessGroup() throws Exception {
        ChildProcesses.startInOwnSession(true);
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName()).start()) {
            child.awaitLog("ready", TIMEOUT);
            long pid = child.pid();
            // /proc/<pid>/stat: pid (comm) state ppid pgrp session ...
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            assertThat(Long.parseLong(fields[2])).as("process group").isEqualTo(pid);
            assertThat(Long.parseLong(fields[3])).as("session").isEqualTo(pid);
            assertThat(ProcessHandle.of(pid).flatMap(h -> h.info().command()))
                    .hasValueSatisfying(command -> assertThat(command).endsWith("java"));
            assertThat(child.stop()).isEqualTo(143);
        } finally {
            ChildProcesses.startInOwnSession(false);
        }
    }

    @Test
    void actionsBeforeReapingStopChildrenGracefully() {
        long etcdPid;
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName())
                .args("graceful-etcd")
                .start()) {
            String line = child.awaitLog("etcd pid=", TIMEOUT);
            etcdPid = Long.parseLong(line.substring("etcd pid=".length()).trim());
            child.awaitLog("ready", TIMEOUT);
            child.stop(); // SIGTERM: the reaper runs the action, which stops etcd with SIGTERM
            assertThat(child.logTail(5))
                    .contains("before reaping: etcd alive=true")
                    .contains("before reaping: etcd closed, alive=false");
        }
        assertThat(ProcessHandle.of(etcdPid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
    }

    @Test
    void withTheWatchdogAChildKeepsItsPidAndAStopLeavesNothingBehind() {
        ChildProcesses.stopWhenThisJvmDies(true, 20);
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName()).start()) {
            child.awaitLog("ready", TIMEOUT);
            ProcessHandle handle = ProcessHandle.of(child.pid()).orElseThrow();
            assertThat(handle.info().command())
                    .hasValueSatisfying(c -> assertThat(c).endsWith("java"));
            List<ProcessHandle> below = handle.descendants().toList();
            assertThat(below).as("the watchdog").isNotEmpty();
            assertThat(child.stop()).isEqualTo(143);
            // Exited: gone, or a zombie that whoever adopted it (init) has yet to reap.
            assertThat(below)
                    .allSatisfy(p -> assertThat(ChildProcesses.isRunning(p))
                            .as("pid " + p.pid())
                            .isFalse());
        } finally {
            ChildProcesses.stopWhenThisJvmDies(false, 0);
        }
    }

    @Test
    void withTheWatchdogChildrenStopWhenTheJvmThatStartedThemIsKilled() throws Exception {
        long etcdPid;
        Path etcdLog;
        List<ProcessHandle> etcdAndBelow = new ArrayList<>();
        try (JavaProcess child = JavaProcess.builder(ChildMain.class.getName())
                .args("watched-etcd")
                .start()) {
            String line = child.awaitLog("etcd log=", TIMEOUT);
            etcdLog = Path.of(line.substring("etcd log=".length(), line.indexOf(" pid=")));
            etcdPid = Long.parseLong(
                    line.substring(line.indexOf(" pid=") + " pid=".length()).trim());
            child.awaitLog("ready", TIMEOUT);
            ProcessHandle etcd = ProcessHandle.of(etcdPid).orElseThrow();
            etcdAndBelow.add(etcd);
            etcd.descendants().forEach(etcdAndBelow::add);
            assertThat(etcdAndBelow).as("etcd and its watchdog").hasSizeGreaterThanOrEqualTo(2);
            // SIGKILL to the JVM alone: no shutdown hook, no reaper; only the watchdog can help.
            ProcessHandle jvm = ProcessHandle.of(child.pid()).orElseThrow();
            jvm.destroyForcibly();
            jvm.onExit().get();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (etcdAndBelow.stream().anyMatch(ProcessHandle::isAlive) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(etcdAndBelow)
                .allSatisfy(p -> assertThat(p.isAlive())
                        .as("pid " + p.pid() + " left running")
                        .isFalse());
        assertThat(Files.readString(etcdLog))
                .contains("watchfanout-watchdog: the process that started pid " + etcdPid + " is gone");
        WorkDirs.deleteRecursively(etcdLog.getParent());
    }
}

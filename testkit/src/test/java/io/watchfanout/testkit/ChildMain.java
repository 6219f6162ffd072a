package io.watchfanout.testkit;

/** A main class for {@link JavaProcessTest}: prints what it got, then sleeps or exits. */
public final class ChildMain {
    private ChildMain() {}

    /**
     * Entry point.
     *
     * @param args {@code exit <code>} to exit at once, {@code etcd} to start an etcd and never
     *     close it, {@code graceful-etcd} to start an etcd in its own session that a
     *     {@link ChildProcesses#runBeforeReaping} action stops, {@code watched-etcd} to start an etcd
     *     behind the watchdog of {@link ChildProcesses#stopWhenThisJvmDies}, anything else to sleep
     *     until killed
     * @throws Exception never, in practice
     */
    public static void main(String[] args) throws Exception {
        System.out.println("args=" + String.join(",", args));
        System.out.println("env=" + System.getenv("TESTKIT_GREETING"));
        System.out.println("maxHeapMiB=" + Runtime.getRuntime().maxMemory() / (1 << 20));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("shutdown hook ran")));
        if (args.length == 2 && args[0].equals("exit")) {
            System.out.println("exiting");
            System.exit(Integer.parseInt(args[1]));
        }
        if (args.length == 1 && args[0].equals("etcd")) {
            EtcdServer etcd = EtcdServer.builder().build().start(); // never closed: the shutdown hook must kill it
            System.out.println("etcd dir=" + etcd.dataDir().getParent() + " pid=" + etcd.pid());
        }
        if (args.length == 1 && args[0].equals("graceful-etcd")) {
            ChildProcesses.startInOwnSession(true);
            EtcdServer etcd = EtcdServer.builder().build().start();
            ChildProcesses.runBeforeReaping(() -> {
                System.out.println("before reaping: etcd alive=" + etcd.isAlive());
                etcd.close();
                System.out.println("before reaping: etcd closed, alive=" + etcd.isAlive());
            });
            System.out.println("etcd pid=" + etcd.pid());
        }
        if (args.length == 1 && args[0].equals("watched-etcd")) {
            ChildProcesses.startInOwnSession(true);
            ChildProcesses.stopWhenThisJvmDies(true, 20);
            EtcdServer etcd = EtcdServer.builder().build().start();
            System.out.println("etcd log=" + etcd.logFile() + " pid=" + etcd.pid());
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}

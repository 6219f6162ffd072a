package io.watchfanout.localstack.demo;

import io.watchfanout.common.CommonFlags;
import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.Flag;
import io.watchfanout.common.FlagTable;
import io.watchfanout.localstack.StackFlags;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The demo load generator on its own, against an etcd that runs elsewhere (the {@code loadgen}
 * service of {@code docker-compose.yml}):
 * {@code java -cp local-stack.jar io.watchfanout.localstack.demo.DemoLoadMain --etcd-endpoints URLS}.
 * Writes what {@code bin/local-stack --demo} writes ({@link DemoLoad}) until SIGTERM. Every flag
 * also reads from {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 143 after SIGTERM, 2 for bad flags.
 */
@Command(
        name = "demo-load",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        modelTransformer = DemoLoadMain.Flags.class,
        version = "watch-fanout demo load 0.1.0",
        description = "Writes Kubernetes objects as kube-apiserver stores them (protobuf: pods, config maps, "
                + "deployments, nodes, namespaces, node leases, events under expiring leases; JSON: a CRD and its "
                + "backups) under /registry/ of etcd, with transactions, until SIGTERM.",
        footer = {
            "",
            "Every flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, for example "
                    + "WATCHFANOUT_ETCD_ENDPOINTS."
        })
public final class DemoLoadMain implements Callable<Integer> {
    /** The demo load's flags, defined once; picocli makes them through {@code @Command(modelTransformer)}. */
    public static final class Flags extends FlagTable {
        static final Flag<List<String>> ETCD_ENDPOINTS = CommonFlags.etcdEndpoints()
                .required()
                .help(
                        "etcd client URLs, comma-separated, e.g. http://127.0.0.1:2379; host:port means http://host:port.");
        static final Flag<Integer> DEMO_RATE =
                StackFlags.demoRate().help("Writes per second (etcd operations, a transaction counts once).");

        /** The table in {@code --help}'s order. */
        public Flags() {
            super(DefaultStyle.SENTENCE, ETCD_ENDPOINTS, DEMO_RATE);
        }
    }

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Parses the flags and writes until SIGTERM.
     *
     * @param args the command-line arguments
     */
    public static void main(String[] args) {
        // Before the first logger: log to stdout (a container's log), not to the local stack's file.
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "logback-demo.xml");
        }
        System.exit(new CommandLine(new DemoLoadMain())
                .setDefaultValueProvider(new EnvironmentDefaults())
                .execute(args));
    }

    @Override
    public Integer call() throws InterruptedException {
        FlagTable.Values v = new Flags().values(spec);
        DemoLoad load = DemoLoad.start(String.join(",", v.get(Flags.ETCD_ENDPOINTS)), v.get(Flags.DEMO_RATE));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            load.close();
                            stopped.countDown();
                        },
                        "demo-load-shutdown"));
        stopped.await();
        return 0;
    }
}

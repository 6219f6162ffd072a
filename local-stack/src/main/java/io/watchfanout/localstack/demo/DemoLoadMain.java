package io.watchfanout.localstack.demo;

import io.watchfanout.common.EnvironmentDefaults;
import io.watchfanout.common.EtcdEndpointConverter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The demo load generator on its own, against an etcd that runs elsewhere (the {@code loadgen}
 * service of {@code docker-compose.yml}):
 * {@code java -cp local-stack.jar io.watchfanout.localstack.demo.DemoLoadMain --etcd-endpoints URLS}.
 * Writes what {@code bin/local-stack --demo} writes ({@link DemoLoad}) until SIGTERM. Every flag
 * also reads from {@code WATCHFANOUT_<FLAG_NAME>}. Exit codes: 143 after SIGTERM, 2 for bad flags.
 */
@Command(name = "demo-load", mixinStandardHelpOptions = true, sortOptions = false,
    version = "watch-fanout demo load 0.1.0",
    description = "Writes Kubernetes-like objects (pods, config maps, deployments, node leases, events under "
        + "expiring leases) under /registry/ of etcd, with transactions, until SIGTERM.",
    footer = {"", "Every flag also reads from the environment variable WATCHFANOUT_<FLAG_NAME>, for example "
        + "WATCHFANOUT_ETCD_ENDPOINTS."})
public final class DemoLoadMain implements Callable<Integer> {
  @Option(names = "--etcd-endpoints", required = true, split = ",", paramLabel = "URLS",
      converter = EtcdEndpointConverter.class,
      description = "etcd client URLs, comma-separated, e.g. http://127.0.0.1:2379; host:port means http://host:port.")
  List<String> etcdEndpoints;

  @Option(names = "--demo-rate", defaultValue = "20", paramLabel = "N",
      description = "Writes per second (etcd operations, a transaction counts once). Default: ${DEFAULT-VALUE}.")
  int demoRate;

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
    System.exit(new CommandLine(new DemoLoadMain()).setDefaultValueProvider(new EnvironmentDefaults())
        .execute(args));
  }

  @Override
  public Integer call() throws InterruptedException {
    if (demoRate < 1 || demoRate > 10_000) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--demo-rate: " + demoRate + " (expected: 1..10000 writes per second)");
    }
    DemoLoad load = DemoLoad.start(String.join(",", etcdEndpoints), demoRate);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      load.close();
      stopped.countDown();
    }, "demo-load-shutdown"));
    stopped.await();
    return 0;
  }
}

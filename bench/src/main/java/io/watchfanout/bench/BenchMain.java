package io.watchfanout.bench;

import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code bin/bench SCENARIO [options]}: starts what the scenario needs on loopback (etcd, Kafka,
 * the ingester and fan-out node jars, an {@code etcd grpc-proxy}), drives load, prints a progress
 * line, and ends with a table (median of the rounds, min–max beside it) and ratios, a CSV and
 * PNG charts under {@code bench/results/}. docs/BENCHMARKS.md describes each scenario.
 */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        version = "watch-fanout bench 0.1.0",
        description = {
            "Benchmarks of watch-fanout on this machine, side by side in one invocation.",
            "Micro-benchmarks (JMH): bin/bench jmh -prof gc, or java -jar bench/target/benchmarks.jar -prof gc."
        },
        subcommands = {
            FanoutVsEtcdScenario.class,
            LimitScenario.class,
            MemoScenario.class,
            WatchersScenario.class,
            RebuildScenario.class,
            StateChurnScenario.class,
            IngestScenario.class,
            ResumeScenario.class,
            MemoryScenario.class,
            KubeScenario.class,
            KubeAuthzScenario.class,
            io.watchfanout.bench.chaos.ChaosScenario.class,
            CommandLine.HelpCommand.class
        },
        footer = {"", "Exit status: 0 after a run, 1 when a scenario failed, 2 on bad flags."})
public final class BenchMain implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(
                spec.commandLine(),
                "Missing SCENARIO (one of: fanout-vs-etcd, limit, "
                        + "memo, watchers, rebuild, state-churn, ingest, resume, memory, kube, kube-authz, chaos)");
    }

    /** The repository root: {@code -Dwatchfanout.repo}, else the working directory. */
    static Path repo() {
        return Path.of(System.getProperty("watchfanout.repo", "."))
                .toAbsolutePath()
                .normalize();
    }

    /** Entry point of {@code java -jar bench/target/bench.jar}. */
    public static void main(String[] args) {
        int code = new CommandLine(new BenchMain())
                .setExecutionExceptionHandler((e, cl, parsed) -> {
                    System.err.println();
                    System.err.println("bench: " + cl.getCommandName() + " failed: " + e);
                    e.printStackTrace();
                    return 1;
                })
                .execute(args);
        System.exit(code);
    }
}

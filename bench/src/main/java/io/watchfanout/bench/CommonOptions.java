package io.watchfanout.bench;

import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/** Options every scenario takes. */
final class CommonOptions {
    @Option(
            names = "--rounds",
            defaultValue = "3",
            paramLabel = "N",
            description = "Rounds per configuration; figures are the median, with min-max (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(
            names = "--duration",
            defaultValue = "8s",
            paramLabel = "DURATION",
            converter = io.watchfanout.common.DurationConverter.class,
            description = "Load time of one round (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(
            names = "--warmup",
            defaultValue = "10s",
            paramLabel = "DURATION",
            converter = io.watchfanout.common.DurationConverter.class,
            description =
                    "Unmeasured load before the rounds of each configuration (the first one of a run: 4 times as long), so "
                            + "that the JIT compilers of every process (Kafka, the ingester, the node, the client) are done before "
                            + "measuring (default: ${DEFAULT-VALUE}).")
    Duration warmup;

    @Option(
            names = "--results",
            defaultValue = "bench/results",
            paramLabel = "DIR",
            description = "Where the CSV and PNG files go, relative to the repository (default: ${DEFAULT-VALUE}).")
    Path results;

    Path resultsDir() {
        return BenchMain.repo().resolve(results);
    }

    /** Rejects rounds and durations that cannot give a figure, before anything starts. */
    void check(picocli.CommandLine.Model.CommandSpec spec) {
        if (rounds < 1) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(), "--rounds: " + rounds + " (expected: >= 1)");
        }
        if (duration.isZero() || duration.isNegative()) {
            throw new picocli.CommandLine.ParameterException(
                    spec.commandLine(),
                    "--duration: " + io.watchfanout.common.DurationConverter.format(duration) + " (expected: > 0)");
        }
    }
}

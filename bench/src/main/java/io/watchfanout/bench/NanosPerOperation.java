package io.watchfanout.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The settings shared by the micro-benchmarks that report nanoseconds per operation: average
 * time, 3 one-second warm-up and 5 one-second measured iterations in one fork, a state per
 * thread. JMH reads these annotations from the superclass, so a benchmark that extends this class
 * states only what differs (its own {@code @Param}s and a class-level annotation overrides one).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public abstract class NanosPerOperation {
    /** For subclasses only. */
    protected NanosPerOperation() {}
}

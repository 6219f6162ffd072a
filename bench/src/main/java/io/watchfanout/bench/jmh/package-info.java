/**
 * JMH micro-benchmarks of the hot path, each measured through the public surface of what it
 * measures: dispatch through the watch core ({@code DispatchBench}, {@code IndexedDispatchBench}),
 * frame encodings ({@code FrameEncodingBench}), the Kubernetes codec ({@code KubeEncodingBench}) and
 * the common {@code RangeIndex} ({@code RangeIndexBench}). Run with {@code bin/bench jmh}.
 */
package io.watchfanout.bench.jmh;

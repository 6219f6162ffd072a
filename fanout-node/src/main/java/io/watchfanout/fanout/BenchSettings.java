package io.watchfanout.fanout;

/**
 * Knobs that exist only for benchmarks, kept out of {@link NodeConfig}: production never sets
 * them. The one way to set them is the hidden flag that the benchmark passes to the node it
 * starts ({@code bin/bench memo}, docs/BENCHMARKS.md); {@link #NONE} everywhere else.
 *
 * @param encodePerWatcher {@code --bench-encode-per-watcher}: live dispatch encodes a frame per
 *     watcher instead of sharing one per event and encoding, to measure what encode-once saves
 */
record BenchSettings(boolean encodePerWatcher) {
    /** No benchmark knob set: how production runs. */
    static final BenchSettings NONE = new BenchSettings(false);
}

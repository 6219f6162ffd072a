package io.watchfanout.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A fan-out node under measurement and the suffix of its rows: {@code ""} for this checkout's,
 * {@code " baseline"} for the node of {@code --baseline-jar} (another build, e.g. the one before a
 * change) that a scenario measures beside it on the same topics, so that the report gives this
 * checkout's figures as ratios to the baseline's from one run.
 *
 * @param label the suffix of the variant's rows
 * @param node the running node
 */
record NodeVariant(String label, BenchStack.Node node) {
    /**
     * Starts this checkout's node and, with {@code baselineJar}, the baseline's, both on {@code topics}.
     *
     * @param baselineJar the baseline's node jar, or null for this checkout's node alone
     * @param maxHeap each node's {@code -Xmx}
     * @return this checkout's variant first
     */
    static List<NodeVariant> start(BenchStack stack, Path baselineJar, String topics, String maxHeap) {
        List<NodeVariant> nodes = new ArrayList<>();
        nodes.add(new NodeVariant("", stack.startNode(topics, List.of(), List.of(), maxHeap)));
        if (baselineJar != null) {
            nodes.add(new NodeVariant(
                    " baseline", stack.startNode(baselineJar.toAbsolutePath(), topics, List.of(), List.of(), maxHeap)));
        }
        return nodes;
    }

    /**
     * With a baseline among {@code nodes}: reports this checkout's median of {@code column} in
     * {@code row} over the baseline's (its row is {@code row} with the baseline's label); nothing
     * without one.
     */
    static void baselineRatio(List<NodeVariant> nodes, Figures f, Report report, String row, String column) {
        if (nodes.size() < 2) {
            return;
        }
        double now = f.median(row, column);
        double before = f.median(row + nodes.get(1).label(), column);
        report.ratio(String.format("%s, %s: this %.3g / baseline %.3g = %.2f", row, column, now, before, now / before));
    }
}

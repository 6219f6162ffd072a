package io.watchfanout.bench.chaos;

/**
 * Reads values out of a Prometheus text exposition ({@code /metrics} of a node or an ingester),
 * for the fault run's checks. Thread-safety: stateless.
 */
final class MetricsText {
    private MetricsText() {}

    /**
     * The sum of the samples of a metric whose label set contains {@code labels} (e.g.
     * {@code dependency="etcd"}, or "" for every sample), NaN when there is none. Lines of other
     * metrics whose names start the same ({@code watchfanout_watchers_live}) do not count.
     */
    static double sum(String text, String metric, String labels) {
        double sum = 0;
        boolean found = false;
        for (String line : text.split("\n")) {
            if (!line.startsWith(metric)) {
                continue;
            }
            String rest = line.substring(metric.length());
            if (!(rest.startsWith("{") || rest.startsWith(" "))) {
                continue;
            }
            int brace = rest.indexOf('}');
            String set = rest.startsWith("{") && brace > 0 ? rest.substring(1, brace) : "";
            if (!labels.isEmpty() && !set.contains(labels)) {
                continue;
            }
            String value = rest.substring(rest.lastIndexOf(' ') + 1).strip();
            try {
                sum += Double.parseDouble(value);
                found = true;
            } catch (NumberFormatException e) {
                // not a sample line
            }
        }
        return found ? sum : Double.NaN;
    }
}

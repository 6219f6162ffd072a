package io.watchfanout.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of a scenario: rows (e.g. "fanout W=1000"), columns (e.g. "deliveries/s"), and
 * for each cell the values of every round; a cell is reported as its median with min–max.
 * Rows and columns keep their insertion order. Thread-safe (synchronized).
 */
final class Figures {
    private final Map<String, Map<String, List<Double>>> rows = new LinkedHashMap<>();
    private final List<String> columns = new ArrayList<>();

    /** Adds one round's value of {@code column} in {@code row}. */
    synchronized void add(String row, String column, double value) {
        if (!columns.contains(column)) {
            columns.add(column);
        }
        rows.computeIfAbsent(row, r -> new LinkedHashMap<>())
                .computeIfAbsent(column, c -> new ArrayList<>())
                .add(value);
    }

    synchronized List<String> rows() {
        return new ArrayList<>(rows.keySet());
    }

    synchronized List<String> columns() {
        return new ArrayList<>(columns);
    }

    /** The values of a cell, in round order; empty when none. */
    synchronized List<Double> values(String row, String column) {
        Map<String, List<Double>> r = rows.get(row);
        List<Double> v = r == null ? null : r.get(column);
        return v == null ? List.of() : new ArrayList<>(v);
    }

    /** The median of a cell, NaN when empty. */
    double median(String row, String column) {
        return Stats.median(values(row, column));
    }

    /** Median, min and max of a list of values. */
    static final class Stats {
        private Stats() {}

        static double median(List<Double> v) {
            if (v.isEmpty()) {
                return Double.NaN;
            }
            List<Double> s = new ArrayList<>(v);
            s.sort(null);
            int n = s.size();
            return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
        }

        static double min(List<Double> v) {
            return v.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        }

        static double max(List<Double> v) {
            return v.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        }
    }
}

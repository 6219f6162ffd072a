package io.watchfanout.bench;

import java.awt.Color;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The end of a scenario: the table of figures (median of the rounds, min–max beside it) and
 * ratios on stdout, and under the results directory a CSV of every round's value and one PNG
 * per chart ({@code <scenario>-<time>.csv}, {@code <scenario>-<time>-<chart>.png}).
 */
final class Report {
    /** One line chart: x and y per series. */
    static final class Chart {
        final String name;
        final String title;
        final String xTitle;
        final String yTitle;
        final boolean logX;
        final Map<String, List<double[]>> series = new LinkedHashMap<>();

        Chart(String name, String title, String xTitle, String yTitle, boolean logX) {
            this.name = name;
            this.title = title;
            this.xTitle = xTitle;
            this.yTitle = yTitle;
            this.logX = logX;
        }

        Chart point(String s, double x, double y) {
            if (!Double.isNaN(y)) {
                series.computeIfAbsent(s, k -> new ArrayList<>()).add(new double[] {x, y});
            }
            return this;
        }
    }

    private final String scenario;
    private final Figures figures;
    private final List<String> ratios = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final List<Chart> charts = new ArrayList<>();

    Report(String scenario, Figures figures) {
        this.scenario = scenario;
        this.figures = figures;
    }

    /** A ratio line, e.g. "fan-out / etcd deliveries/s at W=1000: 12.3x (target >= 10x: met)". */
    Report ratio(String line) {
        ratios.add(line);
        return this;
    }

    Report note(String line) {
        notes.add(line);
        return this;
    }

    Report chart(Chart c) {
        charts.add(c);
        return this;
    }

    /** Prints the table and writes CSV and charts under {@code dir}; returns the files written. */
    List<Path> write(PrintStream out, Path dir) throws IOException {
        List<String> cols = figures.columns();
        List<String> rows = figures.rows();
        List<String[]> cells = new ArrayList<>();
        String[] header = new String[cols.size() + 1];
        header[0] = scenario;
        for (int c = 0; c < cols.size(); c++) {
            header[c + 1] = cols.get(c);
        }
        cells.add(header);
        for (String r : rows) {
            String[] line = new String[cols.size() + 1];
            line[0] = r;
            for (int c = 0; c < cols.size(); c++) {
                List<Double> v = figures.values(r, cols.get(c));
                line[c + 1] = v.isEmpty() ? "-" : cell(v);
            }
            cells.add(line);
        }
        int[] width = new int[header.length];
        for (String[] line : cells) {
            for (int i = 0; i < line.length; i++) {
                width[i] = Math.max(width[i], line[i].length());
            }
        }
        out.println();
        int rounds = rows.isEmpty() || cols.isEmpty()
                ? 0
                : figures.values(rows.get(0), cols.get(0)).size();
        out.println("== " + scenario + ": median of " + rounds + " rounds (min-max) ==");
        for (int l = 0; l < cells.size(); l++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < cells.get(l).length; i++) {
                String s = cells.get(l)[i];
                sb.append(i == 0 ? String.format("%-" + width[i] + "s", s) : String.format("  %" + width[i] + "s", s));
            }
            out.println(sb);
            if (l == 0) {
                out.println("-".repeat(sb.length()));
            }
        }
        if (!ratios.isEmpty()) {
            out.println();
            ratios.forEach(r -> out.println("  " + r));
        }
        notes.forEach(n -> out.println("  note: " + n));

        Files.createDirectories(dir);
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        List<Path> written = new ArrayList<>();
        Path csv = dir.resolve(scenario + "-" + stamp + ".csv");
        StringBuilder sb = new StringBuilder("scenario,row,figure,median,min,max,rounds\n");
        for (String r : rows) {
            for (String c : cols) {
                List<Double> v = figures.values(r, c);
                if (v.isEmpty()) {
                    continue;
                }
                sb.append(scenario)
                        .append(',')
                        .append(quote(r))
                        .append(',')
                        .append(quote(c))
                        .append(',')
                        .append(num(Figures.Stats.median(v)))
                        .append(',')
                        .append(num(Figures.Stats.min(v)))
                        .append(',')
                        .append(num(Figures.Stats.max(v)))
                        .append(',');
                for (int i = 0; i < v.size(); i++) {
                    sb.append(i == 0 ? "" : " ").append(num(v.get(i)));
                }
                sb.append('\n');
            }
        }
        for (String r : ratios) {
            sb.append(scenario).append(",ratio,").append(quote(r)).append(",,,,\n");
        }
        Files.writeString(csv, sb.toString(), StandardCharsets.UTF_8);
        written.add(csv);
        System.setProperty("java.awt.headless", "true");
        for (Chart c : charts) {
            if (c.series.isEmpty()) {
                continue;
            }
            XYChart chart = new XYChartBuilder()
                    .width(900)
                    .height(560)
                    .title(c.title)
                    .xAxisTitle(c.xTitle)
                    .yAxisTitle(c.yTitle)
                    .build();
            chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
            chart.getStyler().setXAxisLogarithmic(c.logX);
            chart.getStyler().setChartBackgroundColor(Color.WHITE);
            for (Map.Entry<String, List<double[]>> s : c.series.entrySet()) {
                double[] xs = s.getValue().stream().mapToDouble(p -> p[0]).toArray();
                double[] ys = s.getValue().stream().mapToDouble(p -> p[1]).toArray();
                chart.addSeries(s.getKey(), xs, ys);
            }
            Path png = dir.resolve(scenario + "-" + stamp + "-" + c.name + ".png");
            BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
            written.add(png);
        }
        out.println();
        written.forEach(p -> out.println("  wrote " + p));
        return written;
    }

    private static String cell(List<Double> v) {
        double med = Figures.Stats.median(v);
        if (v.size() == 1) {
            return fmt(med);
        }
        return fmt(med) + " (" + fmt(Figures.Stats.min(v)) + "-" + fmt(Figures.Stats.max(v)) + ")";
    }

    /** A compact human format: 3 significant digits, k/M suffixes above 10,000. */
    static String fmt(double d) {
        if (Double.isNaN(d)) {
            return "n/a";
        }
        double a = Math.abs(d);
        if (a >= 10_000_000) {
            return String.format(Locale.ROOT, "%.1fM", d / 1e6);
        }
        if (a >= 10_000) {
            return String.format(Locale.ROOT, "%.1fk", d / 1e3);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", d);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", d);
        }
        return String.format(Locale.ROOT, "%.2f", d);
    }

    private static String num(double d) {
        return Double.isNaN(d) ? "" : String.format(Locale.ROOT, "%.4f", d);
    }

    private static String quote(String s) {
        return s.contains(",") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }
}

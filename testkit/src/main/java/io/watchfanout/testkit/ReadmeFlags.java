package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The README's flag tables (the rows after {@code <!-- flags: NAME -->}) against a runnable's
 * picocli command line, so that the documentation cannot drift from {@code --help}: every
 * visible flag has exactly one row, in the same order, with the same default ("required" for
 * a required flag, the computed default's words where {@code --help} gives them), the same
 * unit (where {@code --help} has a line {@code Unit: ...}, as io.watchfanout.common.FlagTable
 * writes it) and the same meaning (the help text without its unit and default clauses).
 * Markdown code spans in the README are ignored.
 *
 * <p>Stateless and thread-safe.
 */
public final class ReadmeFlags {
    /** The line of an option's help with its unit, range and default (common's FlagTable.UNIT_LINE). */
    private static final String UNIT_LINE = "Unit: ";

    private static final Pattern DEFAULT_CLAUSE =
            Pattern.compile("\\s*\\((?:default|Default): ([^)]*)\\)\\.?|\\s*Default: (.*?)\\.?$");

    private ReadmeFlags() {}

    /**
     * One row of a flag table.
     *
     * @param flag the long name, e.g. {@code --port}
     * @param defaultValue {@code required}, a literal default in backticks, words for a computed
     *     one, or null where the command line leaves it to the README
     * @param unit the unit and range, or null where the command line leaves it to the README
     * @param meaning the help text
     */
    public record Row(String flag, String defaultValue, String unit, String meaning) {}

    /**
     * The rows of the table named {@code name}, from the README.md of the repository the
     * working directory lies in (found by walking up).
     *
     * @throws IllegalStateException when the README or the table is missing
     */
    public static List<Row> table(String name) {
        String marker = "<!-- flags: " + name + " -->";
        List<String> lines = readme();
        int at = lines.indexOf(marker);
        if (at < 0) {
            throw new IllegalStateException("README.md has no " + marker);
        }
        List<Row> rows = new ArrayList<>();
        for (int i = at + 3; i < lines.size() && lines.get(i).startsWith("| `"); i++) {
            String[] cells = lines.get(i).split(" \\| ", 4);
            String flag = cells[0].substring(3, cells[0].indexOf('`', 3))
                    .replace("[no-]", "")
                    .replaceAll("\\[=\\w+\\]", "");
            int cut = flag.indexOf('=');
            if (cut > 0) {
                flag = flag.substring(0, cut);
            }
            String meaning = cells[3].endsWith(" |") ? cells[3].substring(0, cells[3].length() - 2) : cells[3];
            rows.add(new Row(flag, cells[1].trim(), cells[2].trim(), meaning.trim()));
        }
        return rows;
    }

    /**
     * The rows the README must hold for {@code commandLine}: its visible options in declaration
     * order, without {@code --help}/{@code --version}.
     */
    public static List<Row> expected(CommandLine commandLine) {
        List<Row> rows = new ArrayList<>();
        for (OptionSpec o : commandLine.getCommandSpec().options()) {
            if (o.hidden() || o.usageHelp() || o.versionHelp()) {
                continue;
            }
            String text =
                    String.join(" ", o.description()).replaceAll("\\s+", " ").replace("%%", "%");
            String unitLine = unitLine(o);
            String defaultValue;
            if (o.required() || text.contains("(required)")) {
                defaultValue = "required";
            } else if (o.defaultValue() != null && !o.defaultValue().isEmpty()) {
                defaultValue = "`" + o.defaultValue() + "`";
            } else {
                Matcher m = DEFAULT_CLAUSE.matcher(text);
                defaultValue = m.find() ? (m.group(1) != null ? m.group(1) : m.group(2)).trim() : null;
            }
            String unit = unitLine == null
                    ? null
                    : DEFAULT_CLAUSE
                            .matcher(unitLine.substring(UNIT_LINE.length()))
                            .replaceAll("")
                            .replaceAll("\\s*\\(required\\)", "")
                            .replaceAll("\\.$", "")
                            .trim();
            rows.add(new Row(o.longestName(), defaultValue, unit, meaning(o)));
        }
        return rows;
    }

    /** The last line of an option's help when it is the unit line. */
    private static String unitLine(OptionSpec o) {
        String[] d = o.description();
        String last = d.length < 2 ? "" : d[d.length - 1].replace("%%", "%");
        return last.startsWith(UNIT_LINE) ? last : null;
    }

    /**
     * Differences between the README's table {@code name} and {@code commandLine}'s flags, one
     * line each; empty when they agree. A default or unit the command line does not state may be
     * described freely in the README. With differences, the last line is the table as
     * {@code --help} has it.
     */
    public static List<String> differences(CommandLine commandLine, String name) {
        Map<String, Row> documented = new LinkedHashMap<>();
        for (Row r : table(name)) {
            documented.put(r.flag(), r);
        }
        List<String> out = new ArrayList<>();
        List<Row> expected = expected(commandLine);
        for (Row e : expected) {
            Row d = documented.remove(e.flag());
            if (d == null) {
                out.add(e.flag() + ": in --help, not in the README's table '" + name + "'");
                continue;
            }
            if (e.defaultValue() != null
                    && !e.defaultValue()
                            .replace("`", "")
                            .equals(d.defaultValue().replace("`", ""))) {
                out.add(e.flag() + ": default " + e.defaultValue() + " in --help, " + d.defaultValue()
                        + " in the README");
            }
            if (e.unit() != null && !e.unit().equals(d.unit().replace("`", ""))) {
                out.add(e.flag() + ": unit \"" + e.unit() + "\" in --help, \"" + d.unit() + "\" in the README");
            }
            if (!e.meaning().equals(d.meaning().replace("`", ""))) {
                out.add(e.flag() + ": meaning in --help: \"" + e.meaning() + "\"; in the README: \"" + d.meaning()
                        + "\"");
            }
        }
        documented.keySet().forEach(f -> out.add(f + ": in the README's table '" + name + "', not in --help"));
        if (out.isEmpty()) {
            List<String> order = table(name).stream().map(Row::flag).toList();
            List<String> helpOrder = expected.stream().map(Row::flag).toList();
            if (!order.equals(helpOrder)) {
                out.add("the README lists the flags in another order than --help: " + helpOrder);
            }
        }
        if (!out.isEmpty()) {
            out.add("the table as --help has it:\n" + markdown(commandLine));
        }
        return out;
    }

    /**
     * The README's table rows for {@code commandLine}, in Markdown (header included), from
     * {@code --help}; units and meanings without the README's code spans.
     */
    public static String markdown(CommandLine commandLine) {
        StringBuilder md = new StringBuilder("| flag | default | unit | meaning |\n|---|---|---|---|\n");
        List<Row> rows = expected(commandLine);
        int i = 0;
        for (OptionSpec o : commandLine.getCommandSpec().options()) {
            if (o.hidden() || o.usageHelp() || o.versionHelp()) {
                continue;
            }
            Row r = rows.get(i++);
            md.append("| `")
                    .append(synopsis(o))
                    .append("` | ")
                    .append(r.defaultValue() == null ? "" : r.defaultValue())
                    .append(" | ")
                    .append(r.unit() == null ? "" : r.unit())
                    .append(" | ")
                    .append(r.meaning())
                    .append(" |\n");
        }
        return md.toString();
    }

    /** How the README writes a flag: {@code --port=PORT}, {@code --[no-]materializer}, {@code --demo[=BOOL]}. */
    private static String synopsis(OptionSpec o) {
        if (o.negatable()) {
            return o.longestName().replaceFirst("^--", "--[no-]");
        }
        if (o.arity().max() == 0) {
            return o.longestName();
        }
        if (o.arity().min() == 0) {
            return o.longestName() + "[=" + o.paramLabel() + "]";
        }
        return o.longestName() + "=" + o.paramLabel();
    }

    /**
     * The help text of an option without its unit line, its default clause ("Default: ..." at the
     * end, or "(default: ...)") and "(required)", ending with a full stop.
     */
    static String meaning(OptionSpec o) {
        String[] d = o.description();
        int lines = unitLine(o) != null ? d.length - 1 : d.length;
        String text = String.join(" ", Arrays.copyOf(d, lines))
                .replaceAll("\\s+", " ")
                .replace("%%", "%")
                .replaceAll("\\s*\\((default|Default): [^)]*\\)", "")
                .replaceAll("\\s*Default: .*$", "")
                .replaceAll("\\s*\\(required\\)", "")
                .trim();
        return text.endsWith(".") ? text : text + ".";
    }

    private static List<String> readme() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path readme = dir.resolve("README.md");
            if (Files.exists(readme)
                    && Files.exists(dir.resolve("pom.xml"))
                    && Files.isDirectory(dir.resolve("testkit"))) {
                try {
                    return Files.readAllLines(readme);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException(
                "no README.md of the repository above " + Path.of("").toAbsolutePath());
    }
}

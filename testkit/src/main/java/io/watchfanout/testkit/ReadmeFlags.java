package io.watchfanout.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The README's flag tables (the rows after {@code <!-- flags: NAME -->}) against a runnable's
 * picocli command line, so that the documentation cannot drift from {@code --help}: every
 * visible flag has exactly one row, in the same order, with the same default ("required" for
 * a required flag) and the same meaning (the help text without its default clause). The unit
 * column is the README's own.
 *
 * <p>Stateless and thread-safe.
 */
public final class ReadmeFlags {
  private ReadmeFlags() {}

  /** One row of a flag table. */
  public record Row(String flag, String defaultValue, String meaning) {}

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
      String flag = cells[0].substring(3, cells[0].indexOf('`', 3)).replace("[no-]", "").replace("[=BOOL]", "");
      int cut = flag.indexOf('=');
      if (cut > 0) {
        flag = flag.substring(0, cut);
      }
      String meaning = cells[3].endsWith(" |") ? cells[3].substring(0, cells[3].length() - 2) : cells[3];
      rows.add(new Row(flag, cells[1].trim(), meaning.trim()));
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
      String flag = o.longestName();
      String defaultValue = o.required() || o.description().length > 0
          && String.join(" ", o.description()).contains("(required)") ? "required"
          : o.defaultValue() == null || o.defaultValue().isEmpty() ? null : "`" + o.defaultValue() + "`";
      rows.add(new Row(flag, defaultValue, meaning(o)));
    }
    return rows;
  }

  /**
   * Differences between the README's table {@code name} and {@code commandLine}'s flags, one
   * line each; empty when they agree. A default the command line leaves unset (computed at
   * run time) may be described freely in the README.
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
      if (e.defaultValue() != null && !e.defaultValue().equals(d.defaultValue())) {
        out.add(e.flag() + ": default " + e.defaultValue() + " in --help, " + d.defaultValue() + " in the README");
      }
      // Markdown code spans are the README's own.
      if (!e.meaning().equals(d.meaning().replace("`", ""))) {
        out.add(e.flag() + ": meaning in --help: \"" + e.meaning() + "\"; in the README: \"" + d.meaning() + "\"");
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
    return out;
  }

  /**
   * The help text of an option without its default clause ("Default: ..." at the end, or
   * "(default: ...)") and "(required)", ending with a full stop.
   */
  static String meaning(OptionSpec o) {
    String text = String.join(" ", o.description()).replaceAll("\\s+", " ")
        .replaceAll("\\s*\\((default|Default): [^)]*\\)", "")
        .replaceAll("\\s*Default: .*$", "")
        .replaceAll("\\s*\\(required\\)", "")
        .trim();
    return text.endsWith(".") ? text : text + ".";
  }

  private static List<String> readme() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path readme = dir.resolve("README.md");
      if (Files.exists(readme) && Files.exists(dir.resolve("pom.xml")) && Files.isDirectory(dir.resolve("testkit"))) {
        try {
          return Files.readAllLines(readme);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    throw new IllegalStateException("no README.md of the repository above " + Path.of("").toAbsolutePath());
  }
}

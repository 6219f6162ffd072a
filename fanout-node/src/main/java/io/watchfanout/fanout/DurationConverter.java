package io.watchfanout.fanout;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses durations of the command line: a non-negative integer with a unit, {@code ms},
 * {@code s}, {@code m} or {@code h} ({@code 500ms}, {@code 5s}, {@code 10m}), or ISO-8601
 * ({@code PT5S}).
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  /**
   * @throws CommandLine.TypeConversionException naming the value and the expected form
   */
  public static Duration parse(String value) {
    String v = value.trim();
    Matcher m = SIMPLE.matcher(v);
    try {
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        switch (m.group(2)) {
          case "ms":
            return Duration.ofMillis(n);
          case "s":
            return Duration.ofSeconds(n);
          case "m":
            return Duration.ofMinutes(n);
          default:
            return Duration.ofHours(n);
        }
      }
      if (v.startsWith("P") || v.startsWith("p")) {
        Duration d = Duration.parse(v);
        if (!d.isNegative()) {
          return d;
        }
      }
    } catch (NumberFormatException | ArithmeticException | DateTimeParseException e) {
      // reported below
    }
    throw new CommandLine.TypeConversionException("'" + value
        + "' is not a duration (expected: a non-negative number with a unit: 500ms, 5s, 10m, 1h)");
  }
}

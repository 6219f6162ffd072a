package io.watchfanout.common;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses durations written as a whole number and a unit: {@code 500ms}, {@code 5s},
 * {@code 10m}, {@code 2h}, {@code 7d} (units ms, s, m, h, d), or ISO-8601 ({@code PT5S}).
 * Negative durations are rejected.
 *
 * <p>Stateless and thread-safe.
 */
public final class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern SIMPLE = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");

    @Override
    public Duration convert(String text) {
        return parse(text);
    }

    /**
     * Writes a duration the way the flags take it, in its largest whole unit: {@code 0s},
     * {@code 500ms}, {@code 90s}, {@code 10m}, {@code 7d}; for messages about a flag's value,
     * which should show what the user wrote, not {@code PT0S}.
     *
     * @param duration a duration; a negative one or one with a fraction of a millisecond is written
     *     in ISO-8601, the converter's other form
     * @return e.g. {@code 5s}
     */
    public static String format(Duration duration) {
        if (duration.isNegative() || duration.getNano() % 1_000_000 != 0) {
            return duration.toString();
        }
        if (duration.isZero()) {
            return "0s";
        }
        long millis;
        try {
            millis = duration.toMillis();
        } catch (ArithmeticException e) {
            return duration.toString(); // beyond 292 million years: no flag takes it anyway
        }
        long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
        String[] units = {"d", "h", "m", "s"};
        for (int i = 0; i < sizes.length; i++) {
            if (millis % sizes[i] == 0) {
                return millis / sizes[i] + units[i];
            }
        }
        return millis + "ms";
    }

    /**
     * @param text e.g. {@code 5s}; a bare {@code 0} is zero
     * @return the duration
     * @throws TypeConversionException naming the value and the expected form
     */
    public static Duration parse(String text) {
        String trimmed = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        if (trimmed.equals("0")) {
            // Zero needs no unit (flags whose help says "0 turns it off").
            return Duration.ZERO;
        }
        Matcher m = SIMPLE.matcher(trimmed);
        try {
            if (m.matches()) {
                long amount = Long.parseLong(m.group(1));
                switch (m.group(2)) {
                    case "ms":
                        return Duration.ofMillis(amount);
                    case "s":
                        return Duration.ofSeconds(amount);
                    case "m":
                        return Duration.ofMinutes(amount);
                    case "h":
                        return Duration.ofHours(amount);
                    default:
                        return Duration.ofDays(amount);
                }
            }
            if (trimmed.startsWith("p")) {
                Duration d = Duration.parse(trimmed.toUpperCase(Locale.ROOT));
                if (!d.isNegative()) {
                    return d;
                }
            }
        } catch (RuntimeException e) {
            // falls through to the message below
        }
        throw new TypeConversionException(
                "'" + text + "' is not a duration (expected: a whole number and a unit, e.g. 500ms, 5s, 10m, 2h, 7d)");
    }
}

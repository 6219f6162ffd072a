package io.watchfanout.common;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses byte sizes: a whole number with an optional binary unit, {@code 1048576},
 * {@code 512KiB}, {@code 8MiB}, {@code 1GiB} (also {@code k}, {@code m}, {@code g} as
 * binary units). The result is in bytes and must fit an {@code int} (≤ 2 GiB − 1), the
 * range of every Kafka and gRPC size limit it feeds.
 *
 * <p>Stateless and thread-safe.
 */
public final class ByteSizeConverter implements ITypeConverter<Integer> {
  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?");

  @Override
  public Integer convert(String text) {
    return parse(text);
  }

  /**
   * @param text e.g. {@code 8MiB}
   * @return the size in bytes
   * @throws TypeConversionException naming the value and the expected form
   */
  public static int parse(String text) {
    Matcher m = SIZE.matcher(text == null ? "" : text.trim().toLowerCase(Locale.ROOT));
    if (m.matches()) {
      String unit = m.group(2) == null ? "b" : m.group(2);
      long multiplier;
      switch (unit.charAt(0)) {
        case 'k':
          multiplier = 1L << 10;
          break;
        case 'm':
          multiplier = 1L << 20;
          break;
        case 'g':
          multiplier = 1L << 30;
          break;
        default:
          multiplier = 1;
      }
      try {
        long bytes = Math.multiplyExact(Long.parseLong(m.group(1)), multiplier);
        if (bytes <= Integer.MAX_VALUE) {
          return (int) bytes;
        }
      } catch (ArithmeticException | NumberFormatException e) {
        // falls through to the message below
      }
    }
    throw new TypeConversionException(
        "'" + text + "' is not a byte size (expected: a whole number of bytes up to 2GiB-1, "
            + "optionally with a unit KiB, MiB or GiB, e.g. 8MiB)");
  }
}

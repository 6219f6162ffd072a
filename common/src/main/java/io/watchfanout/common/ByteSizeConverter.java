package io.watchfanout.common;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses byte sizes: a whole number of bytes, {@code 1048576}, or one with a binary unit,
 * {@code 512KiB}, {@code 8MiB}, {@code 1GiB}, also in Kubernetes' spelling {@code 512Ki},
 * {@code 8Mi}, {@code 1Gi} (the runnables are configured from Kubernetes manifests). The
 * unit's case matters. The result is in bytes and must fit an {@code int} (≤ 2 GiB − 1), the
 * range of every Kafka and gRPC size limit it feeds.
 *
 * <p>Decimal-looking units ({@code 64MB}, {@code 64mb}, {@code 64M}, {@code 64k}) are refused:
 * whether {@code MB} means 10<sup>6</sup> or 2<sup>20</sup> bytes depends on who wrote it, and
 * a size limit that is 5 % off in an unknown direction fails later and obscurely.
 *
 * <p>Stateless and thread-safe.
 */
public final class ByteSizeConverter implements ITypeConverter<Integer> {
    private static final Pattern SIZE = Pattern.compile("(\\d+)(Ki|Mi|Gi)?(?:(?<=i)B)?");
    private static final Pattern AMBIGUOUS = Pattern.compile("(\\d+)\\s*([kKmMgG])[bB]?");

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
        String trimmed = text == null ? "" : text.trim();
        Matcher m = SIZE.matcher(trimmed);
        if (m.matches()) {
            String unit = m.group(2) == null ? "B" : m.group(2);
            long multiplier;
            switch (unit.charAt(0)) {
                case 'K':
                    multiplier = 1L << 10;
                    break;
                case 'M':
                    multiplier = 1L << 20;
                    break;
                case 'G':
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
        Matcher ambiguous = AMBIGUOUS.matcher(trimmed);
        String hint = "";
        if (ambiguous.matches()) {
            String binary = ambiguous.group(1)
                    + Character.toUpperCase(ambiguous.group(2).charAt(0)) + "iB";
            hint = "; " + trimmed + " could mean powers of 1000 or of 1024: write " + binary + " for powers of 1024";
        }
        throw new TypeConversionException(
                "'" + text + "' is not a byte size (expected: a whole number of bytes up to 2GiB-1, "
                        + "optionally with a unit KiB, MiB or GiB (or Ki, Mi, Gi), e.g. 8MiB" + hint + ")");
    }
}

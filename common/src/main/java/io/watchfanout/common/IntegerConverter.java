package io.watchfanout.common;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses a whole number flag value (a port, a count) in {@code int}'s range, and says what was
 * expected when it is not one, as the other converters do; picocli's own says only
 * {@code 'abc' is not an int}. Ranges (a TCP port, at least 1) are the flag's {@link Check}.
 *
 * <p>Stateless and thread-safe.
 */
public final class IntegerConverter implements ITypeConverter<Integer> {
    /**
     * @param text the value as given, surrounding blanks allowed
     * @return the number
     * @throws TypeConversionException naming the value and the expected form
     */
    @Override
    public Integer convert(String text) {
        try {
            return Integer.valueOf(text.strip());
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + text
                    + "' is not a whole number (expected: digits, e.g. 8081, at most " + Integer.MAX_VALUE + ")");
        }
    }
}

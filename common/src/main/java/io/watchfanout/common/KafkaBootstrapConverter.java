package io.watchfanout.common;

import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Checks a Kafka bootstrap list, {@code host:port[,host:port]} (IPv6 hosts in brackets), when the
 * flag is parsed: a missing or bad port would otherwise surface only once a Kafka client is built,
 * as a run-time failure of an already started process. Returns the list unchanged.
 *
 * <p>Stateless and thread-safe.
 */
public final class KafkaBootstrapConverter implements ITypeConverter<String> {
    private static final Pattern ENTRY = Pattern.compile("(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._-]+):(\\d{1,5})");

    @Override
    public String convert(String text) {
        return parse(text);
    }

    /**
     * @param text e.g. {@code 127.0.0.1:9092,kafka-1:9092}
     * @return {@code text}, trimmed
     * @throws TypeConversionException naming the bad entry and the expected form
     */
    public static String parse(String text) {
        String trimmed = text == null ? "" : text.trim();
        for (String entry : trimmed.split(",", -1)) {
            var m = ENTRY.matcher(entry.trim());
            if (!m.matches() || Integer.parseInt(m.group(2)) < 1 || Integer.parseInt(m.group(2)) > 65535) {
                throw new TypeConversionException("'" + text + "' is not a Kafka bootstrap list (bad entry '" + entry
                        + "'; expected: host:port, comma-separated, e.g. 127.0.0.1:9092)");
            }
        }
        return trimmed;
    }
}

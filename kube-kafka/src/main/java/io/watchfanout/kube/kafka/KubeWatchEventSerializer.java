package io.watchfanout.kube.kafka;

import io.watchfanout.common.JsonBuffer;
import java.nio.charset.StandardCharsets;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serializer;

/**
 * Writes a {@link KubeWatchEvent} as a change-topic record's value, a kube-apiserver watch event
 * {@code {"type":"ADDED","object":{…}}} (one line of {@code kubectl get -w -o json}'s stream,
 * without the newline), and, where the record has headers, its CloudEvents headers
 * ({@link CloudEventHeaders}), replacing any of the same names.
 *
 * <p>Configuration: {@value #SOURCE_CONFIG} names the cluster in {@code ce_source} (default
 * {@value #DEFAULT_SOURCE}). Thread-safe once configured.
 */
public final class KubeWatchEventSerializer implements Serializer<KubeWatchEvent> {
    /** The configuration key of {@code ce_source}. */
    public static final String SOURCE_CONFIG = "watchfanout.kube.source";
    /** {@code ce_source} when not configured. */
    public static final String DEFAULT_SOURCE = "//watch-fanout";

    private static final byte[] JSON = "application/json".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SPEC = CloudEventHeaders.SPEC_VERSION_1_0.getBytes(StandardCharsets.US_ASCII);

    private volatile byte[] source = DEFAULT_SOURCE.getBytes(StandardCharsets.UTF_8);

    /** A serializer with {@code ce_source} = {@value #DEFAULT_SOURCE} until configured. */
    public KubeWatchEventSerializer() {}

    /** A serializer writing {@code source} as {@code ce_source}. */
    public KubeWatchEventSerializer(String source) {
        this.source = source.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void configure(Map<String, ?> configs, boolean isKey) {
        Object s = configs.get(SOURCE_CONFIG);
        if (s != null) {
            source = s.toString().getBytes(StandardCharsets.UTF_8);
        }
    }

    @Override
    public byte[] serialize(String topic, KubeWatchEvent event) {
        if (event == null) {
            return null;
        }
        JsonBuffer out = new JsonBuffer(event.object().length + 32);
        out.ascii("{\"type\":\"").ascii(event.type().name()).ascii("\",\"object\":");
        out.bytes(event.object(), 0, event.object().length);
        out.raw('}');
        return Arrays.copyOf(out.array(), out.length());
    }

    @Override
    public byte[] serialize(String topic, Headers headers, KubeWatchEvent event) {
        if (event != null && headers != null) {
            put(headers, CloudEventHeaders.SPEC_VERSION, SPEC);
            put(
                    headers,
                    CloudEventHeaders.ID,
                    utf8((event.resync() ? "resync-" : "") + event.revision() + "-" + event.index()));
            put(headers, CloudEventHeaders.SOURCE, source);
            put(
                    headers,
                    CloudEventHeaders.TYPE,
                    utf8(CloudEventHeaders.TYPE_PREFIX + event.type().name().toLowerCase(Locale.ROOT)));
            put(headers, CloudEventHeaders.SUBJECT, utf8(CloudEventHeaders.objectPath(event)));
            if (event.time() != null) {
                put(headers, CloudEventHeaders.TIME, utf8(DateTimeFormatter.ISO_INSTANT.format(event.time())));
            }
            put(headers, CloudEventHeaders.CONTENT_TYPE, JSON);
            put(headers, CloudEventHeaders.REVISION, utf8(Long.toString(event.revision())));
            put(
                    headers,
                    CloudEventHeaders.PREVIOUS_RESOURCE_VERSION,
                    utf8(Long.toString(event.previousResourceVersion())));
            headers.remove(CloudEventHeaders.RESYNC);
            if (event.resync()) {
                headers.add(CloudEventHeaders.RESYNC, utf8("true"));
            }
        }
        return serialize(topic, event);
    }

    private static void put(Headers headers, String name, byte[] value) {
        headers.remove(name);
        headers.add(name, value);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}

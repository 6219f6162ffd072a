package io.watchfanout.kube.kafka;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.watchfanout.kube.codec.JsonFields;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads a change-topic record written by {@link KubeWatchEventSerializer} back into a
 * {@link KubeWatchEvent}: type, group/version/kind, namespace, name and resourceVersion from the
 * watch event's object, and from the CloudEvents headers the resource (the subject's path), the etcd
 * revision, the previous resourceVersion, the resync mark and the time. Read without headers, the
 * resource is empty, the revision is the resourceVersion, the previous resourceVersion
 * {@link KubeWatchEvent#UNKNOWN} and the time null.
 *
 * <p>A value that is not such an event raises a {@link SerializationException} (a
 * {@code RecordDeserializationException} from the consumer, naming partition and offset); a
 * tombstone ({@code null}) is {@code null}. Stateless and thread-safe.
 */
public final class KubeWatchEventDeserializer implements Deserializer<KubeWatchEvent> {

    /** A deserializer; it takes no configuration. */
    public KubeWatchEventDeserializer() {}

    @Override
    public KubeWatchEvent deserialize(String topic, byte[] data) {
        return deserialize(topic, null, data);
    }

    @Override
    public KubeWatchEvent deserialize(String topic, Headers headers, byte[] data) {
        if (data == null) {
            return null;
        }
        JsonObject event;
        try {
            JsonElement parsed = JsonParser.parseString(new String(data, StandardCharsets.UTF_8));
            if (!parsed.isJsonObject()) {
                throw new SerializationException("a watch event that is not a JSON object on " + topic);
            }
            event = parsed.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new SerializationException("a watch event that is not JSON on " + topic + ": " + e.getMessage());
        }
        KubeWatchEvent.Type type;
        try {
            type = KubeWatchEvent.Type.valueOf(JsonFields.str(event, "type"));
        } catch (IllegalArgumentException e) {
            throw new SerializationException("watch event type " + JsonFields.str(event, "type") + " on " + topic
                    + " (expected: ADDED, MODIFIED or DELETED)");
        }
        JsonElement objectElement = event.get("object");
        if (objectElement == null || !objectElement.isJsonObject()) {
            throw new SerializationException("a watch event without an object on " + topic);
        }
        JsonObject object = objectElement.getAsJsonObject();
        JsonObject meta = JsonFields.obj(object, "metadata");
        String apiVersion = JsonFields.str(object, "apiVersion");
        int slash = apiVersion.indexOf('/');
        long resourceVersion = number(JsonFields.str(meta, "resourceVersion"), "metadata.resourceVersion", topic);
        String subject = header(headers, CloudEventHeaders.SUBJECT);
        String revision = header(headers, CloudEventHeaders.REVISION);
        String previous = header(headers, CloudEventHeaders.PREVIOUS_RESOURCE_VERSION);
        String time = header(headers, CloudEventHeaders.TIME);
        String id = header(headers, CloudEventHeaders.ID);
        return new KubeWatchEvent(
                type,
                slash < 0 ? "" : apiVersion.substring(0, slash),
                apiVersion.substring(slash + 1),
                JsonFields.str(object, "kind"),
                subject == null ? "" : CloudEventHeaders.resourceOf(subject),
                JsonFields.str(meta, "namespace"),
                JsonFields.str(meta, "name"),
                resourceVersion,
                previous == null
                        ? KubeWatchEvent.UNKNOWN
                        : number(previous, CloudEventHeaders.PREVIOUS_RESOURCE_VERSION, topic),
                revision == null ? resourceVersion : number(revision, CloudEventHeaders.REVISION, topic),
                id == null ? 0 : index(id),
                "true".equals(header(headers, CloudEventHeaders.RESYNC)),
                time == null ? null : instant(time, topic),
                object.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static String header(Headers headers, String name) {
        if (headers == null) {
            return null;
        }
        Header h = headers.lastHeader(name);
        return h == null || h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    /** The event index that ends a {@code ce_id} ({@code <revision>-<index>}). */
    private static int index(String id) {
        try {
            return Integer.parseInt(id.substring(id.lastIndexOf('-') + 1));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static long number(String text, String what, String topic) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new SerializationException(what + " '" + text + "' on " + topic + " (expected: a decimal revision)");
        }
    }

    private static Instant instant(String text, String topic) {
        try {
            return Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new SerializationException(
                    CloudEventHeaders.TIME + " '" + text + "' on " + topic + " (expected: RFC 3339)");
        }
    }
}

package io.watchfanout.kube.kafka;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Removes a Secret's values before it leaves for Kafka: every value of {@code data} and
 * {@code stringData} becomes the empty string (the keys stay, so a consumer still sees which keys
 * a Secret holds), and the annotation {@value #ANNOTATION} lists the fields redacted, so that a
 * redacted value is never taken for an empty one. Stateless and thread-safe.
 */
public final class SecretRedaction {
    /** The annotation naming the redacted fields, e.g. {@code data}. */
    public static final String ANNOTATION = "watchfanout.io/redacted";

    private SecretRedaction() {}

    /** The Secret JSON {@code object} with its values redacted; a new array. */
    static byte[] redact(byte[] object) {
        JsonObject tree = JsonParser.parseString(new String(object, StandardCharsets.UTF_8))
                .getAsJsonObject();
        List<String> redacted = new ArrayList<>();
        for (String field : List.of("data", "stringData")) {
            JsonElement values = tree.get(field);
            if (values != null && values.isJsonObject()) {
                for (String k : values.getAsJsonObject().keySet()) {
                    values.getAsJsonObject().add(k, new JsonPrimitive(""));
                }
                redacted.add(field);
            }
        }
        if (!redacted.isEmpty()) {
            JsonElement meta = tree.get("metadata");
            if (meta == null || !meta.isJsonObject()) {
                meta = new JsonObject();
                tree.add("metadata", meta);
            }
            JsonElement annotations = meta.getAsJsonObject().get("annotations");
            if (annotations == null || !annotations.isJsonObject()) {
                annotations = new JsonObject();
                meta.getAsJsonObject().add("annotations", annotations);
            }
            annotations.getAsJsonObject().addProperty(ANNOTATION, String.join(",", redacted));
        }
        return tree.toString().getBytes(StandardCharsets.UTF_8);
    }
}

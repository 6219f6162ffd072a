package io.watchfanout.kube.kafka;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Reads a latest-object topic's value, a Kubernetes object as kube-apiserver's JSON, into a JSON
 * tree; a tombstone (the object deleted) is {@code null}, as a {@code KTable} expects. A value
 * that is not a JSON object raises a {@link SerializationException}. Stateless and thread-safe.
 */
public final class KubeObjectDeserializer implements Deserializer<JsonObject> {

    /** A deserializer; it takes no configuration. */
    public KubeObjectDeserializer() {}

    @Override
    public JsonObject deserialize(String topic, byte[] data) {
        if (data == null) {
            return null;
        }
        try {
            JsonElement parsed = JsonParser.parseString(new String(data, StandardCharsets.UTF_8));
            if (!parsed.isJsonObject()) {
                throw new SerializationException("an object that is not a JSON object on " + topic);
            }
            return parsed.getAsJsonObject();
        } catch (JsonParseException e) {
            throw new SerializationException("an object that is not JSON on " + topic + ": " + e.getMessage());
        }
    }
}

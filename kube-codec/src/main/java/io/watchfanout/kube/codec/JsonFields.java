package io.watchfanout.kube.codec;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

/**
 * Lenient reads of a JSON object's fields, as Go's typed decoding of a Kubernetes object sees
 * them: a field that is absent or of another type reads as the zero value (an empty object, array
 * or string, 0), never as an error. Used where JSON-stored objects (CRDs, custom resources) and
 * rendered objects (Table rows) are read.
 *
 * <p>Stateless; thread-safe.
 */
public final class JsonFields {
    private JsonFields() {}

    /** The object at {@code field} of {@code o}, or an empty object when {@code o} is null or the field is absent or not an object. */
    public static JsonObject obj(JsonObject o, String field) {
        JsonElement e = o == null ? null : o.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }

    /** The array at {@code field} of {@code o}, or an empty array when it is absent or not an array. */
    public static JsonArray arr(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonArray() ? e.getAsJsonArray() : new JsonArray();
    }

    /** The string (or other primitive, as a string) at {@code field} of {@code o}, or an empty string when it is absent or not a primitive. */
    public static String str(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    /** The number at {@code field} of {@code o} as a long, or 0 when it is absent or not a number. */
    public static long integer(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber() ? e.getAsLong() : 0;
    }
}

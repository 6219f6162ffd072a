package io.watchfanout.fanout.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The {@code continue} token of a paged Kubernetes list, in kube-apiserver's form (k8s.io/apiserver
 * {@code storage.EncodeContinue}): unpadded URL-safe base64 of
 * {@code {"v":"meta.k8s.io/v1","rv":N,"start":"<key after the resource's prefix>"}}, to which the
 * node adds {@code "rem"}, the objects left from {@code start} at {@code rv}, so that later pages
 * carry {@code remainingItemCount} without counting again (kube-apiserver ignores fields it does
 * not know, and clients treat the token as opaque).
 *
 * @param revision the revision every page is read at, {@code > 0}; or {@link #LATEST}, kube-apiserver's
 *     token of a 410 Expired that continues at the latest revision (an inconsistent list)
 * @param start the first key of the next page, relative to the list's key prefix
 * @param remaining objects from {@code start} on, or -1 when unknown
 */
public record KubeContinueToken(long revision, String start, long remaining) {
    private static final String VERSION = "meta.k8s.io/v1";
    /** The revision of a token that continues at the latest state (kube-apiserver writes -1). */
    public static final long LATEST = -1;

    /** The token's text. */
    public String encode() {
        JsonObject json = new JsonObject();
        json.addProperty("v", VERSION);
        json.addProperty("rv", revision);
        json.addProperty("start", start);
        if (remaining >= 0) {
            json.addProperty("rem", remaining);
        }
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(json.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Reads a token made by {@link #encode()} (or by kube-apiserver, without {@code rem}).
     *
     * @throws IllegalArgumentException with kube-apiserver's 400 message ({@code continue key is
     *     not valid: …}) for anything else
     */
    public static KubeContinueToken decode(String token) {
        try {
            byte[] bytes;
            try {
                bytes = Base64.getUrlDecoder().decode(token.replace("=", ""));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("continue key is not valid: illegal base64 data: " + e.getMessage());
            }
            JsonElement parsed = JsonParser.parseString(new String(bytes, StandardCharsets.UTF_8));
            if (!parsed.isJsonObject()) {
                throw new IllegalArgumentException("continue key is not valid: not an object");
            }
            JsonObject json = parsed.getAsJsonObject();
            if (!json.has("v") || !VERSION.equals(json.get("v").getAsString())) {
                throw new IllegalArgumentException(
                        "continue key is not valid: server does not recognize this encoded version");
            }
            long rv = json.has("rv") ? json.get("rv").getAsLong() : 0;
            if (rv <= 0 && rv != LATEST) {
                throw new IllegalArgumentException(
                        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
            }
            String start = json.has("start") ? json.get("start").getAsString() : "";
            if (start.isEmpty() || start.startsWith("/") || start.contains("/../") || start.startsWith("../")) {
                throw new IllegalArgumentException("continue key is not valid: the start key is empty or not relative");
            }
            long rem = json.has("rem") ? json.get("rem").getAsLong() : -1;
            return new KubeContinueToken(rv, start, rem < 1 ? -1 : rem);
        } catch (JsonParseException | IllegalStateException | UnsupportedOperationException | NumberFormatException e) {
            throw new IllegalArgumentException("continue key is not valid: " + e.getMessage());
        }
    }
}

package io.watchfanout.fanout.read;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The opaque {@code continue} token of a paged list, as the cacher keeps it: the revision every
 * page is read at, the next key and the number of key-values from the next key to the end of the
 * range at that revision. Each API writes it in a {@link Form} of its own, which a token issued
 * by an earlier node of the same API still decodes in.
 *
 * <p>The count is what makes {@code remainingItemCount} cost nothing after the first page: every
 * page is read at the same revision, so the key-values after page k are those after page k−1
 * minus page k's ({@link #remainingAfter}); and since every node holds the same state at a
 * revision, a token from one node continues on another with a correct count. A token without a
 * count (an older node's, or kube-apiserver's) decodes with {@link #remaining()} -1 (unknown),
 * and its pages leave {@code remainingItemCount} out.
 *
 * @param revision the revision the list is read at, {@code > 0}; or {@link #LATEST} in the
 *     {@link Form#KUBERNETES} form, kube-apiserver's token of a 410 Expired that continues at the
 *     latest revision (an inconsistent list)
 * @param nextKey the first key of the next page: the whole key in {@link Form#COMPACT}, the key
 *     after the list's prefix in {@link Form#KUBERNETES}
 * @param remaining the key-values from {@code nextKey} on at {@code revision} ({@code >= 1}, since
 *     {@code nextKey} is one of them), or -1 when unknown
 */
public record ContinueToken(long revision, ByteString nextKey, long remaining) {
    /** The revision of a token that continues at the latest state (kube-apiserver writes -1). */
    public static final long LATEST = -1;

    /** How a token is written on the wire; each API keeps its own, so that its earlier tokens stay valid. */
    public enum Form {
        /**
         * The node's own ({@code /v1/kv}): URL-safe base64 without padding of the varint revision,
         * the length-delimited next key and, when known, the varint count. Tokens of nodes older
         * than the count are two fields long. (An older node refuses the three-field token: during
         * a rolling upgrade a client paging across nodes lists again.)
         */
        COMPACT,
        /**
         * kube-apiserver's (k8s.io/apiserver {@code storage.EncodeContinue}): unpadded URL-safe
         * base64 of {@code {"v":"meta.k8s.io/v1","rv":N,"start":"<key after the list's prefix>"}},
         * to which the node adds {@code "rem"}, the count (kube-apiserver ignores fields it does
         * not know, and clients treat the token as opaque).
         */
        KUBERNETES
    }

    private static final String KUBERNETES_VERSION = "meta.k8s.io/v1";

    /** A token without the remaining count. */
    public ContinueToken(long revision, ByteString nextKey) {
        this(revision, nextKey, -1);
    }

    /**
     * The key-values after a later page of {@code pageItems}: this token's count less the page's,
     * or -1 when the token has no count (an older node's) or a count the page contradicts (a
     * forged token): better no {@code remainingItemCount} than a wrong one.
     */
    public long remainingAfter(int pageItems) {
        if (remaining < 0) {
            return -1;
        }
        long left = remaining - pageItems;
        return left >= 1 ? left : -1;
    }

    /** The token's text in {@code form}. */
    public String encode(Form form) {
        byte[] bytes = form == Form.COMPACT ? compact() : kubernetes();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * Reads a token made by {@link #encode} in {@code form} (in {@link Form#KUBERNETES}, also
     * kube-apiserver's, without {@code rem}).
     *
     * @throws IllegalArgumentException for anything else; in {@link Form#KUBERNETES} with
     *     kube-apiserver's 400 message ({@code continue key is not valid: …})
     */
    public static ContinueToken decode(String token, Form form) {
        return form == Form.COMPACT ? decodeCompact(token) : decodeKubernetes(token);
    }

    private byte[] compact() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        try {
            out.writeUInt64NoTag(revision);
            out.writeBytesNoTag(nextKey);
            if (remaining >= 0) {
                out.writeUInt64NoTag(remaining);
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private static ContinueToken decodeCompact(String token) {
        try {
            CodedInputStream in =
                    CodedInputStream.newInstance(Base64.getUrlDecoder().decode(token));
            long revision = in.readUInt64();
            ByteString key = in.readBytes();
            long remaining = -1;
            if (!in.isAtEnd()) {
                remaining = in.readUInt64();
            }
            if (!in.isAtEnd() || revision <= 0 || remaining == 0 || remaining < -1) {
                throw new IllegalArgumentException("trailing bytes, no revision or a bad count");
            }
            return new ContinueToken(revision, key, remaining);
        } catch (IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private byte[] kubernetes() {
        JsonObject json = new JsonObject();
        json.addProperty("v", KUBERNETES_VERSION);
        json.addProperty("rv", revision);
        json.addProperty("start", nextKey.toStringUtf8());
        if (remaining >= 0) {
            json.addProperty("rem", remaining);
        }
        return json.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static ContinueToken decodeKubernetes(String token) {
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
            if (!json.has("v") || !KUBERNETES_VERSION.equals(json.get("v").getAsString())) {
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
            return new ContinueToken(rv, ByteString.copyFromUtf8(start), rem < 1 ? -1 : rem);
        } catch (JsonParseException | IllegalStateException | UnsupportedOperationException | NumberFormatException e) {
            throw new IllegalArgumentException("continue key is not valid: " + e.getMessage());
        }
    }
}

package io.watchfanout.fanout.v1;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpStatuses;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;

/**
 * The opaque {@code continue} token of a paged list: the revision of the first page (all
 * pages are read at it), the next key and the number of key-values from the next key to the
 * end of the range at that revision, as URL-safe base64 (like Kubernetes' tokens).
 *
 * <p>The count is what makes {@code remainingItemCount} cost nothing after the first page:
 * every page is read at the same revision, so the key-values after page k are those after page
 * k−1 minus page k's; and since every node holds the same state at a revision, a token from one
 * node continues on another with a correct count. Tokens of nodes older than the count are two
 * fields long; they decode with {@link #remaining()} -1 (unknown), and their pages leave
 * {@code remainingItemCount} out. (An older node refuses the three-field token with 400: during
 * a rolling upgrade a client paging across nodes lists again.)
 *
 * @param revision the revision the list is read at, {@code > 0}
 * @param nextKey the first key of the next page
 * @param remaining the key-values from {@code nextKey} on at {@code revision} ({@code >= 1}, since
 *     {@code nextKey} is one of them), or -1 when unknown
 */
record ContinueToken(long revision, ByteString nextKey, long remaining) {
    /** A token without the remaining count. */
    ContinueToken(long revision, ByteString nextKey) {
        this(revision, nextKey, -1);
    }

    /** The URL-safe base64 text, without padding. */
    String encode() {
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
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.toByteArray());
    }

    /**
     * Decodes a token made by {@link #encode()}, with or without the remaining count.
     *
     * @throws ApiException 400 when the token was not made by {@link #encode()}
     */
    static ContinueToken decode(String token) throws ApiException {
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
                throw new IOException("trailing bytes, no revision or a bad count");
            }
            return new ContinueToken(revision, key, remaining);
        } catch (IOException | IllegalArgumentException e) {
            throw new ApiException(HttpStatuses.badRequest("parameter continue: \"" + token
                    + "\" is not a valid token (expected: the continue field of a previous page)"));
        }
    }
}

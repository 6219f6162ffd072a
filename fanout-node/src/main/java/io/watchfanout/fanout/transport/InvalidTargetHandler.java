package io.watchfanout.fanout.transport;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Explains a request whose target Undertow's parser would have refused (rewritten by
 * {@link RequestTargetRewriter} to {@value RequestTargetRewriter#INVALID_TARGET_PATH}): 400
 * BadRequest with a JSON {@code Status} whose message names the path or the parameter, the
 * value, the position of the bad character and how to write it instead.
 */
final class InvalidTargetHandler {
    private InvalidTargetHandler() {}

    /**
     * The path of the original target carried by a rewritten query string, up to its query and
     * still percent-encoded, or null when it cannot be read.
     */
    static String originalPath(String rewrittenQuery) {
        String target = original(rewrittenQuery);
        if (target == null) {
            return null;
        }
        int question = target.indexOf('?');
        return question < 0 ? target : target.substring(0, question);
    }

    /** The 400 for the original target carried by a rewritten query string. */
    static ApiException explain(String rewrittenQuery) {
        String target = original(rewrittenQuery);
        if (target == null) {
            return new ApiException(HttpStatuses.badRequest("the request target is not a valid URL "
                    + "(expected: RFC 3986 characters, other bytes percent-encoded as %XX)"));
        }
        int question = target.indexOf('?');
        try {
            QueryParams.check("request path", question < 0 ? target : target.substring(0, question));
            if (question >= 0) {
                QueryParams.parse(target.substring(question + 1));
            }
        } catch (ApiException e) {
            return e;
        }
        return new ApiException(HttpStatuses.badRequest("request target \"" + QueryParams.printable(target)
                + "\" is not a valid URL (expected: RFC 3986 characters, other bytes percent-encoded as %XX)"));
    }

    /** The original target, its bytes as chars one to one (so that positions are byte positions), or null. */
    private static String original(String rewrittenQuery) {
        try {
            ByteString raw = QueryParams.parse(rewrittenQuery).bytes("raw");
            return new String(Base64.getUrlDecoder().decode(raw.toStringUtf8()), StandardCharsets.ISO_8859_1);
        } catch (ApiException | RuntimeException e) {
            return null;
        }
    }
}

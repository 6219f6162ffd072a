package io.watchfanout.fanout.v1;

import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ListRules;
import io.watchfanout.fanout.read.ReadMode;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpStatuses;
import io.watchfanout.fanout.transport.QueryParams;
import java.util.ArrayList;
import java.util.List;

/**
 * Which revision a {@code GET /v1/kv} answers at: the query's {@code resourceVersion},
 * {@code resourceVersionMatch}, {@code limit} and {@code continue} read, then decided by the
 * core's {@link ListRules} (the table lives there).
 *
 * <p>Every refusal is a 400 {@code BadRequest} whose message starts with kube-apiserver's own
 * text (e.g. {@code resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless
 * resourceVersion is provided}). kube-apiserver answers the {@code resourceVersionMatch} ones
 * with 422 {@code Invalid} ({@code ListOptions.meta.k8s.io "" is invalid: ...}) and the
 * {@code continue} one with 400; the node keeps 400 for every parameter error, as its API
 * promises. An empty {@code resourceVersionMatch=} is absent, as in Kubernetes.
 *
 * @param mode how the revision is chosen
 * @param resourceVersion N for {@link ReadMode#NOT_OLDER_THAN} and {@link ReadMode#EXACT}, else 0
 * @param limit the most key-values per page, 0 for all
 * @param token the decoded token (in {@link ContinueToken.Form#COMPACT}) for {@link ReadMode#CONTINUE}, else null
 */
record ListRead(ReadMode mode, long resourceVersion, long limit, ContinueToken token) {
    /** The values of {@code resourceVersionMatch}, spelt as Kubernetes spells them. */
    static final String EXACT = ListRules.EXACT;
    /** See {@link #EXACT}. */
    static final String NOT_OLDER_THAN = ListRules.NOT_OLDER_THAN;

    /**
     * Decides the read of a list request.
     *
     * @throws ApiException 400 for a bad number, a bad token, or a combination Kubernetes refuses
     */
    static ListRead parse(QueryParams q) throws ApiException {
        long rv = q.nonNegative("resourceVersion", -1, "a revision");
        long limit = q.nonNegative("limit", 0, "the most key-values per page, 0 for all");
        String match = q.text("resourceVersionMatch");
        String cont = q.text("continue");
        boolean continued = cont != null && !cont.isEmpty();
        List<ListRules.Violation> violations = ListRules.matchViolations(rv, match, continued);
        if (!violations.isEmpty()) {
            List<String> errors = new ArrayList<>();
            for (ListRules.Violation v : violations) {
                errors.add(v.message(match));
            }
            throw badRequest(errors, hint(violations.get(0)));
        }
        if (ListRules.resourceVersionWithContinue(rv, continued)) {
            throw badRequest(
                    List.of(ListRules.Violation.RESOURCE_VERSION_WITH_CONTINUE.message(match)),
                    hint(ListRules.Violation.RESOURCE_VERSION_WITH_CONTINUE));
        }
        ReadMode mode = ListRules.mode(rv, match, limit, continued);
        return switch (mode) {
            case CONTINUE -> new ListRead(mode, 0, limit, token(cont));
            case MOST_RECENT, ANY -> new ListRead(mode, 0, limit, null);
            default -> new ListRead(mode, rv, limit, null);
        };
    }

    /** What to send instead of the first broken rule. */
    private static String hint(ListRules.Violation first) {
        return switch (first) {
            case MATCH_WITHOUT_RESOURCE_VERSION ->
                "resourceVersion=N with resourceVersionMatch, or neither for the most recent state";
            case MATCH_WITH_CONTINUE -> "continue alone: the token carries the first page's revision";
            case UNSUPPORTED_MATCH ->
                "resourceVersionMatch=" + EXACT + " or " + NOT_OLDER_THAN + ", in this letter case";
            case EXACT_AT_ZERO ->
                "resourceVersionMatch=" + EXACT + " with a revision > 0; resourceVersion=0 alone reads at any revision";
            case RESOURCE_VERSION_WITH_CONTINUE ->
                "continue alone, or with resourceVersion=0: the token carries the first page's revision";
        };
    }

    /** The {@code continue} token, in the form {@code /v1/kv} issues it. */
    private static ContinueToken token(String text) throws ApiException {
        try {
            return ContinueToken.decode(text, ContinueToken.Form.COMPACT);
        } catch (IllegalArgumentException e) {
            throw new ApiException(HttpStatuses.badRequest("parameter continue: \"" + text
                    + "\" is not a valid token (expected: the continue field of a previous page)"));
        }
    }

    private static ApiException badRequest(List<String> errors, String hint) {
        String text = errors.size() == 1 ? errors.get(0) : "[" + String.join(", ", errors) + "]";
        return new ApiException(HttpStatuses.badRequest(text + " (expected: " + hint + ")"));
    }

    /**
     * Checks {@code resourceVersionMatch} on {@code GET /v1/watch} as Kubernetes'
     * {@code validateWatchOptions} does: only {@code NotOlderThan}, and only with
     * {@code sendInitialEvents} given (true or false). Unlike Kubernetes, {@code sendInitialEvents}
     * without {@code resourceVersionMatch} is accepted (the node's API had it first) and means
     * NotOlderThan. With {@code sendInitialEvents=true} and {@code resourceVersion=N} the initial
     * state is at the node's revision S once it is {@code >= N}; with {@code false} the match
     * changes nothing (a watch from N).
     *
     * @throws ApiException 400 with Kubernetes' text
     */
    static void checkWatch(QueryParams q) throws ApiException {
        String match = q.text("resourceVersionMatch");
        if (match == null || match.isEmpty()) {
            return;
        }
        List<String> errors = new ArrayList<>();
        String hint = null;
        if (q.text("sendInitialEvents") == null) {
            errors.add("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                    + "sendInitialEvents is provided");
            hint = "sendInitialEvents=true&resourceVersionMatch=" + NOT_OLDER_THAN + ", or no resourceVersionMatch";
        }
        if (!match.equals(NOT_OLDER_THAN)) {
            errors.add("resourceVersionMatch: Unsupported value: \"" + match + "\": supported values: \""
                    + NOT_OLDER_THAN + "\"");
            hint = hint != null
                    ? hint
                    : "resourceVersionMatch=" + NOT_OLDER_THAN
                            + " (a watch cannot start exactly at an older revision's state)";
        }
        if (!errors.isEmpty()) {
            throw badRequest(errors, hint);
        }
    }
}

package io.watchfanout.fanout.v1;

import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpStatuses;
import io.watchfanout.fanout.transport.QueryParams;
import java.util.ArrayList;
import java.util.List;

/**
 * Which revision a {@code GET /v1/kv} answers at, decided from {@code resourceVersion},
 * {@code resourceVersionMatch}, {@code limit} and {@code continue} as kube-apiserver decides it
 * (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions, the table
 * "resourceVersionMatch and paging parameters"; k8s.io/apimachinery's {@code ValidateListOptions}
 * and k8s.io/apiserver's storage list validation for the errors):
 *
 * <table>
 *   <caption>resourceVersionMatch, paging and resourceVersion</caption>
 *   <tr><th>resourceVersionMatch</th><th>paging</th><th>absent</th><th>0</th><th>N &gt; 0</th></tr>
 *   <tr><td>absent</td><td>no limit</td><td>most recent</td><td>any</td><td>not older than N</td></tr>
 *   <tr><td>absent</td><td>limit, no continue</td><td>most recent</td><td>any</td><td>exact N</td></tr>
 *   <tr><td>absent</td><td>continue</td><td>the token's revision</td><td>the token's revision</td><td>400</td></tr>
 *   <tr><td>NotOlderThan</td><td>no continue</td><td>400</td><td>any</td><td>not older than N</td></tr>
 *   <tr><td>Exact</td><td>no continue</td><td>400</td><td>400</td><td>exact N</td></tr>
 *   <tr><td>any value</td><td>continue</td><td>400</td><td>400</td><td>400</td></tr>
 * </table>
 *
 * <p>Every refusal is a 400 {@code BadRequest} whose message starts with kube-apiserver's own
 * text (e.g. {@code resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless
 * resourceVersion is provided}). kube-apiserver answers the {@code resourceVersionMatch} ones
 * with 422 {@code Invalid} ({@code ListOptions.meta.k8s.io "" is invalid: ...}) and the
 * {@code continue} one with 400; the node keeps 400 for every parameter error, as its API
 * promises. An empty {@code resourceVersionMatch=} is absent, as in Kubernetes.
 *
 * @param mode how the revision is chosen
 * @param resourceVersion N for {@link Mode#NOT_OLDER_THAN} and {@link Mode#EXACT}, else 0
 * @param limit the most key-values per page, 0 for all
 * @param token the decoded token for {@link Mode#CONTINUE}, else null
 */
record ListRead(Mode mode, long resourceVersion, long limit, ContinueToken token) {
    /** The values of {@code resourceVersionMatch}, spelt as Kubernetes spells them. */
    static final String EXACT = "Exact";
    /** See {@link #EXACT}. */
    static final String NOT_OLDER_THAN = "NotOlderThan";

    /** How the list's revision is chosen. */
    enum Mode {
        /** No resourceVersion: etcd's current revision or newer (a consistent read, with --etcd-endpoints). */
        MOST_RECENT,
        /** resourceVersion=0: the node's revision, whatever it is. */
        ANY,
        /** A revision {@code >= resourceVersion}: the node's, after waiting for it to get there. */
        NOT_OLDER_THAN,
        /** Exactly {@code resourceVersion}, from the history window (after waiting if it is ahead). */
        EXACT,
        /** A later page: the token's revision, from its next key. */
        CONTINUE
    }

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
        if (match != null && !match.isEmpty()) {
            List<String> errors = new ArrayList<>();
            String hint = null;
            if (rv < 0) {
                errors.add(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                                + "provided");
                hint = "resourceVersion=N with resourceVersionMatch, or neither for the most recent state";
            }
            if (continued) {
                errors.add(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided");
                hint = hint != null ? hint : "continue alone: the token carries the first page's revision";
            }
            if (!match.equals(EXACT) && !match.equals(NOT_OLDER_THAN)) {
                errors.add("resourceVersionMatch: Unsupported value: \"" + match + "\": supported values: \"" + EXACT
                        + "\", \"" + NOT_OLDER_THAN + "\", \"\"");
                hint = hint != null
                        ? hint
                        : "resourceVersionMatch=" + EXACT + " or " + NOT_OLDER_THAN + ", in this letter case";
            }
            if (match.equals(EXACT) && rv == 0) {
                errors.add(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion "
                                + "\"0\"");
                hint = hint != null
                        ? hint
                        : "resourceVersionMatch=" + EXACT + " with a revision > 0; resourceVersion=0 "
                                + "alone reads at any revision";
            }
            if (!errors.isEmpty()) {
                throw badRequest(errors, hint);
            }
        }
        if (continued) {
            if (rv > 0) {
                throw badRequest(
                        List.of("specifying resource version is not allowed when using continue"),
                        "continue alone, or with resourceVersion=0: the token carries the first page's revision");
            }
            return new ListRead(Mode.CONTINUE, 0, limit, ContinueToken.decode(cont));
        }
        if (rv < 0) {
            return new ListRead(Mode.MOST_RECENT, 0, limit, null);
        }
        if (rv == 0) {
            return new ListRead(Mode.ANY, 0, limit, null);
        }
        boolean exact = EXACT.equals(match)
                // Kubernetes' legacy rule: the first page of a paged list at resourceVersion=N is exact.
                || ((match == null || match.isEmpty()) && limit > 0);
        return new ListRead(exact ? Mode.EXACT : Mode.NOT_OLDER_THAN, rv, limit, null);
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

package io.watchfanout.fanout.kube;

import java.util.ArrayList;
import java.util.List;

/**
 * The revision a Kubernetes get or list is answered at, and its page size, from
 * {@code resourceVersion}, {@code resourceVersionMatch}, {@code limit} and {@code continue}, as
 * kube-apiserver decides it (https://kubernetes.io/docs/reference/using-api/api-concepts/,
 * "Semantics for get and list"; k8s.io/apimachinery {@code ValidateListOptions}):
 * {@code resourceVersion} unset is the most recent state (a consistent read), {@code 0} any state
 * the node has, {@code N} not older than N, or exactly N with {@code resourceVersionMatch=Exact}
 * or on the first page of a paged list without a match; a {@code continue} token carries the
 * first page's revision. Refusals use kube-apiserver's codes and words: 422 {@code Invalid} for
 * the {@code resourceVersionMatch} rules and a {@code sendInitialEvents} on a list, 400
 * {@code BadRequest} for values that do not parse ({@link KubeParams}) and the others; a
 * {@code limit} below 1 is no limit, as kube-apiserver reads it.
 *
 * @param mode how the revision is chosen
 * @param resourceVersion N for {@link Mode#NOT_OLDER_THAN} and {@link Mode#EXACT}, else 0
 * @param limit the most objects per page, 0 for all
 * @param token the decoded token for {@link Mode#CONTINUE}, else null
 */
record KubeReadOptions(Mode mode, long resourceVersion, long limit, KubeContinueToken token) {
    /** How the revision of a read is chosen. */
    enum Mode {
        MOST_RECENT,
        ANY,
        NOT_OLDER_THAN,
        EXACT,
        CONTINUE
    }

    /**
     * The options of a list.
     *
     * @throws KubeError 400 or 422 as kube-apiserver answers the same parameters
     */
    static KubeReadOptions list(String rvText, String match, String limitText, String cont, String sendInitialEvents)
            throws KubeError {
        long rv = KubeParams.resourceVersion(rvText);
        long limit = KubeParams.int64(limitText, 0);
        limit = limit <= 0 ? 0 : Math.min(limit, Integer.MAX_VALUE);
        boolean continued = cont != null && !cont.isEmpty();
        List<String> errors = new ArrayList<>();
        if (match != null && !match.isEmpty()) {
            if (rv < 0) {
                errors.add("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless "
                        + "resourceVersion is provided");
            }
            if (continued) {
                errors.add("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is "
                        + "provided");
            }
            if (!match.equals("Exact") && !match.equals("NotOlderThan")) {
                errors.add("resourceVersionMatch: Unsupported value: \"" + match
                        + "\": supported values: \"Exact\", \"NotOlderThan\", \"\"");
            }
            if (match.equals("Exact") && rv == 0) {
                errors.add("resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for "
                        + "resourceVersion \"0\"");
            }
        }
        if (sendInitialEvents != null) {
            errors.add("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
        }
        if (!errors.isEmpty()) {
            throw KubeError.invalidListOptions(errors);
        }
        if (continued) {
            if (rv > 0) {
                throw KubeError.badRequest("specifying resource version is not allowed when using continue");
            }
            try {
                return new KubeReadOptions(Mode.CONTINUE, 0, limit, KubeContinueToken.decode(cont));
            } catch (IllegalArgumentException e) {
                throw KubeError.badRequest(e.getMessage());
            }
        }
        if (rv < 0) {
            return new KubeReadOptions(Mode.MOST_RECENT, 0, limit, null);
        }
        if (rv == 0) {
            return new KubeReadOptions(Mode.ANY, 0, limit, null);
        }
        boolean exact = "Exact".equals(match) || ((match == null || match.isEmpty()) && limit > 0);
        return new KubeReadOptions(exact ? Mode.EXACT : Mode.NOT_OLDER_THAN, rv, limit, null);
    }

    /**
     * The options of a get: unset is the most recent state, {@code 0} any, {@code N} not older than N.
     *
     * @throws KubeError 400 for a resourceVersion that is not a revision
     */
    static KubeReadOptions get(String rvText) throws KubeError {
        long rv = KubeParams.resourceVersion(rvText);
        if (rv < 0) {
            return new KubeReadOptions(Mode.MOST_RECENT, 0, 0, null);
        }
        return rv == 0
                ? new KubeReadOptions(Mode.ANY, 0, 0, null)
                : new KubeReadOptions(Mode.NOT_OLDER_THAN, rv, 0, null);
    }
}

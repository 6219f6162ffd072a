package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ListRules;
import io.watchfanout.fanout.read.ReadMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
 * <p>The table itself is the core's ({@link ListRules}), shared with {@code /v1/kv}; this record
 * reads the values as kube-apiserver reads them and answers its refusals in its words.
 *
 * @param mode how the revision is chosen
 * @param resourceVersion N for {@link ReadMode#NOT_OLDER_THAN} and {@link ReadMode#EXACT}, else 0
 * @param limit the most objects per page, 0 for all
 * @param token the decoded token (in {@link ContinueToken.Form#KUBERNETES}, its key relative to
 *     the list's prefix) for {@link ReadMode#CONTINUE}, else null
 */
record KubeReadOptions(ReadMode mode, long resourceVersion, long limit, ContinueToken token) {
    /**
     * The options of a list.
     *
     * @throws KubeError 400 or 422 as kube-apiserver answers the same parameters
     */
    static KubeReadOptions list(String rvText, String match, String limitText, String cont, String sendInitialEvents)
            throws KubeError {
        Map<String, String> query = new HashMap<>();
        query.put("resourceVersion", rvText);
        query.put("resourceVersionMatch", match);
        query.put("limit", limitText);
        query.put("continue", cont);
        query.put("sendInitialEvents", sendInitialEvents);
        return list(KubeListOptions.parse(query::get, null));
    }

    /**
     * The options of a list.
     *
     * @throws KubeError 400 or 422 as kube-apiserver answers the same parameters
     */
    static KubeReadOptions list(KubeListOptions o) throws KubeError {
        long rv = o.resourceVersion().get();
        long limit = o.limit().get();
        String match = o.resourceVersionMatch();
        String cont = o.continueToken();
        String sendInitialEvents = o.sendInitialEvents();
        limit = limit <= 0 ? 0 : Math.min(limit, Integer.MAX_VALUE);
        boolean continued = cont != null && !cont.isEmpty();
        List<String> errors = new ArrayList<>();
        for (ListRules.Violation v : ListRules.matchViolations(rv, match, continued)) {
            errors.add(v.message(match));
        }
        if (sendInitialEvents != null) {
            errors.add("sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list");
        }
        if (!errors.isEmpty()) {
            throw KubeError.invalidListOptions(errors);
        }
        if (ListRules.resourceVersionWithContinue(rv, continued)) {
            throw KubeError.badRequest(ListRules.Violation.RESOURCE_VERSION_WITH_CONTINUE.message(match));
        }
        ReadMode mode = ListRules.mode(rv, match, limit, continued);
        return switch (mode) {
            case CONTINUE -> {
                try {
                    yield new KubeReadOptions(
                            mode, 0, limit, ContinueToken.decode(cont, ContinueToken.Form.KUBERNETES));
                } catch (IllegalArgumentException e) {
                    throw KubeError.badRequest(e.getMessage());
                }
            }
            case MOST_RECENT, ANY -> new KubeReadOptions(mode, 0, limit, null);
            default -> new KubeReadOptions(mode, rv, limit, null);
        };
    }

    /**
     * The options of a get: unset is the most recent state, {@code 0} any, {@code N} not older than N.
     *
     * @throws KubeError 400 for a resourceVersion that is not a revision
     */
    static KubeReadOptions get(String rvText) throws KubeError {
        return get(KubeListOptions.parse(name -> name.equals("resourceVersion") ? rvText : null, null));
    }

    /**
     * The options of a get, as {@link #get(String)}.
     *
     * @throws KubeError 400 for a resourceVersion that is not a revision
     */
    static KubeReadOptions get(KubeListOptions o) throws KubeError {
        long rv = o.resourceVersion().get();
        return new KubeReadOptions(ListRules.getMode(rv), Math.max(rv, 0), 0, null);
    }
}

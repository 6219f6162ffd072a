package io.watchfanout.fanout.read;

import java.util.ArrayList;
import java.util.List;

/**
 * Which revision a list answers at, decided from {@code resourceVersion},
 * {@code resourceVersionMatch}, {@code limit} and {@code continue} as kube-apiserver decides it
 * (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions, the table
 * "resourceVersionMatch and paging parameters"; k8s.io/apimachinery's {@code ValidateListOptions}
 * and k8s.io/apiserver's storage list validation for the refusals), once for every front end:
 *
 * <table>
 *   <caption>resourceVersionMatch, paging and resourceVersion</caption>
 *   <tr><th>resourceVersionMatch</th><th>paging</th><th>absent</th><th>0</th><th>N &gt; 0</th></tr>
 *   <tr><td>absent</td><td>no limit</td><td>most recent</td><td>any</td><td>not older than N</td></tr>
 *   <tr><td>absent</td><td>limit, no continue</td><td>most recent</td><td>any</td><td>exact N</td></tr>
 *   <tr><td>absent</td><td>continue</td><td>the token's revision</td><td>the token's revision</td><td>refused</td></tr>
 *   <tr><td>NotOlderThan</td><td>no continue</td><td>refused</td><td>any</td><td>not older than N</td></tr>
 *   <tr><td>Exact</td><td>no continue</td><td>refused</td><td>refused</td><td>exact N</td></tr>
 *   <tr><td>any value</td><td>continue</td><td>refused</td><td>refused</td><td>refused</td></tr>
 * </table>
 *
 * <p>The refusals are {@link Violation}s in kube-apiserver's words; each front end answers them
 * with its own status (the Kubernetes API as kube-apiserver does, 422 and 400; {@code /v1/kv}
 * with 400). An empty {@code resourceVersionMatch=} is absent, as in Kubernetes. A
 * {@code resourceVersion} here is -1 when absent, else the revision.
 *
 * <p>Stateless; thread-safe.
 */
public final class ListRules {
    /** The values of {@code resourceVersionMatch}, spelt as Kubernetes spells them. */
    public static final String EXACT = "Exact";
    /** See {@link #EXACT}. */
    public static final String NOT_OLDER_THAN = "NotOlderThan";

    private ListRules() {}

    /** A combination kube-apiserver refuses. */
    public enum Violation {
        /** A match without a resourceVersion. */
        MATCH_WITHOUT_RESOURCE_VERSION,
        /** A match with a continue token. */
        MATCH_WITH_CONTINUE,
        /** A match that is neither {@link #EXACT} nor {@link #NOT_OLDER_THAN}. */
        UNSUPPORTED_MATCH,
        /** {@link #EXACT} at resourceVersion 0. */
        EXACT_AT_ZERO,
        /** A resourceVersion {@code > 0} with a continue token (kube-apiserver's 400). */
        RESOURCE_VERSION_WITH_CONTINUE;

        /** kube-apiserver's text of this refusal of {@code match}. */
        public String message(String match) {
            return switch (this) {
                case MATCH_WITHOUT_RESOURCE_VERSION ->
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                            + "provided";
                case MATCH_WITH_CONTINUE ->
                    "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided";
                case UNSUPPORTED_MATCH ->
                    "resourceVersionMatch: Unsupported value: \"" + match + "\": supported values: \"" + EXACT
                            + "\", \"" + NOT_OLDER_THAN + "\", \"\"";
                case EXACT_AT_ZERO ->
                    "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion "
                            + "\"0\"";
                case RESOURCE_VERSION_WITH_CONTINUE -> "specifying resource version is not allowed when using continue";
            };
        }
    }

    /**
     * The {@code resourceVersionMatch} rules {@code match} breaks, in kube-apiserver's order
     * (empty when none, and when {@code match} is absent or empty).
     *
     * @param resourceVersion -1 when absent
     * @param continued whether a non-empty {@code continue} was given
     */
    public static List<Violation> matchViolations(long resourceVersion, String match, boolean continued) {
        List<Violation> out = new ArrayList<>();
        if (match == null || match.isEmpty()) {
            return out;
        }
        if (resourceVersion < 0) {
            out.add(Violation.MATCH_WITHOUT_RESOURCE_VERSION);
        }
        if (continued) {
            out.add(Violation.MATCH_WITH_CONTINUE);
        }
        if (!match.equals(EXACT) && !match.equals(NOT_OLDER_THAN)) {
            out.add(Violation.UNSUPPORTED_MATCH);
        }
        if (match.equals(EXACT) && resourceVersion == 0) {
            out.add(Violation.EXACT_AT_ZERO);
        }
        return out;
    }

    /**
     * Whether a continued list also names a resourceVersion, which kube-apiserver refuses
     * ({@link Violation#RESOURCE_VERSION_WITH_CONTINUE}); checked after {@link #matchViolations}.
     */
    public static boolean resourceVersionWithContinue(long resourceVersion, boolean continued) {
        return continued && resourceVersion > 0;
    }

    /**
     * The mode of a list that broke no rule.
     *
     * @param resourceVersion -1 when absent
     * @param limit the most items per page, 0 for all
     * @param continued whether a non-empty {@code continue} was given
     */
    public static ReadMode mode(long resourceVersion, String match, long limit, boolean continued) {
        if (continued) {
            return ReadMode.CONTINUE;
        }
        if (resourceVersion < 0) {
            return ReadMode.MOST_RECENT;
        }
        if (resourceVersion == 0) {
            return ReadMode.ANY;
        }
        boolean exact = EXACT.equals(match)
                // Kubernetes' legacy rule: the first page of a paged list at resourceVersion=N is exact.
                || ((match == null || match.isEmpty()) && limit > 0);
        return exact ? ReadMode.EXACT : ReadMode.NOT_OLDER_THAN;
    }

    /** The mode of a get: unset is the most recent state, {@code 0} any, {@code N} not older than N. */
    public static ReadMode getMode(long resourceVersion) {
        if (resourceVersion < 0) {
            return ReadMode.MOST_RECENT;
        }
        return resourceVersion == 0 ? ReadMode.ANY : ReadMode.NOT_OLDER_THAN;
    }
}

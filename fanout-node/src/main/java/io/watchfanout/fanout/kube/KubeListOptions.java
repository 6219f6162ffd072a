package io.watchfanout.fanout.kube;

import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.select.FieldSelector;
import io.watchfanout.kube.codec.select.LabelSelector;
import io.watchfanout.kube.codec.select.SelectorException;
import java.util.function.UnaryOperator;

/**
 * A get, list or watch request's options (kube-apiserver's {@code metainternalversion.ListOptions}),
 * read once from the query, before authorization, as kube-apiserver's request scope reads them;
 * authorization, the read and the watch all take them from here. A value that does not parse is
 * kept as its 400 ({@link Value}), answered when the step that needs it comes (after a 403, as
 * kube-apiserver's filters run before its handler); authorization reads the field selector's name
 * and node without failing on it, as kube-apiserver's request info does.
 *
 * @param watch {@code watch} is true (a boolean as {@link KubeParams#isTrue} reads it)
 * @param labelSelector the {@code labelSelector}
 * @param fieldSelector the {@code fieldSelector}, checked against the resource's selectable fields
 * @param allowWatchBookmarks {@code allowWatchBookmarks} is true
 * @param sendInitialEvents the text of {@code sendInitialEvents}, or null when absent (its presence
 *     counts, as Go's pointer does)
 * @param resourceVersion the {@code resourceVersion}: -1 when absent or empty
 * @param resourceVersionMatch the text of {@code resourceVersionMatch}, or null
 * @param limit the {@code limit} as given (0 when absent)
 * @param timeoutSeconds the {@code timeoutSeconds} (0 when absent)
 * @param continueToken the text of {@code continue}, or null
 */
record KubeListOptions(
        boolean watch,
        Value<LabelSelector> labelSelector,
        Value<FieldSelector> fieldSelector,
        boolean allowWatchBookmarks,
        String sendInitialEvents,
        Value<Long> resourceVersion,
        String resourceVersionMatch,
        Value<Long> limit,
        Value<Long> timeoutSeconds,
        String continueToken) {

    /**
     * A parsed value, or the 400 its text earns.
     *
     * @param value the value, when {@code error} is null
     * @param error the refusal, or null
     */
    record Value<T>(T value, KubeError error) {
        /**
         * The value.
         *
         * @throws KubeError the 400 of a text that does not parse
         */
        T get() throws KubeError {
            if (error != null) {
                throw error;
            }
            return value;
        }

        /** The value, or null when it does not parse. */
        T orNull() {
            return error == null ? value : null;
        }
    }

    /** The parser of one value; a {@link KubeError} is a 400. */
    private interface Parser<T> {
        T parse() throws KubeError, SelectorException;
    }

    /**
     * Reads the options of a request for {@code resource} from its query parameters
     * ({@code param} gives a parameter's text, or null when absent). Never fails: see {@link Value}.
     */
    static KubeListOptions parse(UnaryOperator<String> param, KubeResource resource) {
        return new KubeListOptions(
                KubeParams.isTrue(param.apply("watch")),
                value(() -> LabelSelector.parse(param.apply("labelSelector"))),
                value(() -> FieldSelector.parse(param.apply("fieldSelector"), resource)),
                KubeParams.isTrue(param.apply("allowWatchBookmarks")),
                param.apply("sendInitialEvents"),
                value(() -> KubeParams.resourceVersion(param.apply("resourceVersion"))),
                param.apply("resourceVersionMatch"),
                value(() -> KubeParams.int64(param.apply("limit"), 0)),
                value(() -> KubeParams.int64(param.apply("timeoutSeconds"), 0)),
                param.apply("continue"));
    }

    /** The value {@code fieldSelector} requires of {@code field} ({@code field=x}), or null, also when it does not parse. */
    String selected(String field) {
        FieldSelector fields = fieldSelector.orNull();
        return fields == null ? null : fields.requiredValue(field);
    }

    private static <T> Value<T> value(Parser<T> parser) {
        try {
            return new Value<>(parser.parse(), null);
        } catch (KubeError e) {
            return new Value<>(null, e);
        } catch (SelectorException e) {
            return new Value<>(null, KubeError.badRequest(e.getMessage()));
        }
    }
}

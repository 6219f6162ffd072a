package io.watchfanout.fanout.kube;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.transport.WatchStreams;
import io.watchfanout.fanout.watch.Opening;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSelector;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.select.FieldSelector;
import io.watchfanout.kube.codec.select.LabelSelector;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Kubernetes watches ({@code ?watch=1}, and the legacy {@code /watch/} paths) over the core's one
 * entry and the HTTP port's watch streams, as kube-apiserver's watch cache answers them:
 * <ul>
 *   <li>{@code resourceVersion} "" or "0": synthetic ADDED events of every object now, then the
 *       changes; N: every change after N (410 in an ERROR event when N is older than the history
 *       this node serves, from the events topic too: any revision inside Kafka's retention
 *       resumes on any node); ahead of the node: waited for, then 504;
 *   <li>{@code sendInitialEvents=true} (watch-list; with {@code allowWatchBookmarks=true} and
 *       {@code resourceVersionMatch=NotOlderThan}): the initial events at a state at least as new
 *       as the resourceVersion (etcd's current revision for ""), closed by the
 *       {@code k8s.io/initial-events-end} bookmark;
 *   <li>{@code labelSelector}, {@code fieldSelector}: evaluated on attributes read once per event;
 *       an object moving out of (into) the selection is DELETED (ADDED) for the watcher; a watch
 *       with {@code spec.nodeName=X} is indexed under X, so a pod event visits only its node's
 *       watchers;
 *   <li>{@code allowWatchBookmarks}, {@code timeoutSeconds};
 *   <li>{@code as=PartialObjectMetadata}: every event's object (bookmarks included) the watched
 *       object's metadata alone, in encodings of their own.
 * </ul>
 *
 * <p>Thread-safety: one request per call; shared state is the thread-safe bookmark memo.
 */
final class KubeWatches {
    private final WatchCore core;
    private final WatchStreams streams;
    private final KubeRevisionWait wait;
    private final KubeSettings settings;
    private final KubeBookmarks bookmarks = new KubeBookmarks();

    KubeWatches(WatchCore core, WatchStreams streams, KubeRevisionWait wait, KubeSettings settings) {
        this.core = core;
        this.streams = streams;
        this.wait = wait;
        this.settings = settings;
    }

    /** Takes the watch's slot and authorization once its parameters are valid. */
    interface Admission {
        /** @throws KubeError 403 when not allowed, 429 at a limit */
        WatchGrant admit() throws KubeError;
    }

    /**
     * Starts a watch of {@code range} (the request's resource, namespace or object), admitted by
     * {@code admission}; refusals before the stream are thrown, those of the core's entry answered
     * on the exchange.
     *
     * @throws KubeError 400 for bad parameters, 403/429 from admission, 503/504 from the wait
     */
    void watch(
            HttpServerExchange exchange,
            KubePath path,
            KeyRange range,
            KubeFormat format,
            KubeListOptions q,
            Admission admission)
            throws KubeError, InterruptedException {
        LabelSelector labels = q.labelSelector().get();
        FieldSelector fields = q.fieldSelector().get();
        boolean allowBookmarks = q.allowWatchBookmarks();
        String initialEventsText = q.sendInitialEvents();
        boolean sendInitialEvents = KubeParams.isTrue(initialEventsText);
        String rvMatch = q.resourceVersionMatch();
        long timeoutSeconds = q.timeoutSeconds().get();
        q.limit().get(); // checked, as kube-apiserver parses every ListOptions field
        long given = q.resourceVersion().get();
        long rv = Math.max(0, given);
        validate(initialEventsText, sendInitialEvents, allowBookmarks, rvMatch, q.continueToken());
        if (sendInitialEvents && given < 0) {
            // A consistent watch-list: its initial state is at least etcd's revision now.
            wait.awaitConsistent();
        }
        boolean initial = sendInitialEvents || rv == 0;
        WatchSpec.Builder spec = WatchSpec.of(range, KubeEncodings.of(format))
                .from(rv)
                .bookmarks(allowBookmarks)
                .initialEvents(initial)
                .bookmarkFrames(bookmarks.of(path.resource(), format, sendInitialEvents));
        if (!labels.isEverything() || !fields.isEverything()) {
            WatchSelector selector = a -> a instanceof KubeObjectAttributes k && k.selectedBy(labels, fields);
            spec.selector(selector);
            String node = fields.requiredValue("spec.nodeName");
            if (node != null) {
                spec.indexed(KubeObjectAttributes.NODE_NAME, node);
            }
        }
        WatchGrant grant = admission.admit();
        String contentType = contentType(format);
        if (timeoutSeconds < 0) {
            // kube-apiserver's watch with a timeout already past: the stream ends before any event.
            grant.end("timeout already past", 0);
            exchange.setStatusCode(200);
            exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
            exchange.endExchange();
            return;
        }
        streams.open(
                exchange,
                spec.build(),
                timeoutSeconds,
                contentType,
                grant,
                opening -> refused(exchange, opening, rv, format, contentType));
    }

    /** The core's refusal, on the IO thread: 410 as kube-apiserver's watch cache sends it (an ERROR event), the rest as Status. */
    private void refused(HttpServerExchange exchange, Opening opening, long rv, KubeFormat format, String contentType) {
        KubeError error;
        switch (opening.outcome()) {
            case EXPIRED -> {
                String message = "too old resource version: " + rv + " (" + (core.servableFromRevision() + 1) + ")";
                byte[] frame = format.protobuf()
                        ? KubeWatchFrames.protobufError(410, "Expired", message)
                        : KubeWatchFrames.jsonError(410, "Expired", message);
                exchange.setStatusCode(200);
                exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
                exchange.getResponseSender().send(ByteBuffer.wrap(frame));
                return;
            }
            case TIMED_OUT ->
                error = KubeError.tooLargeResourceVersion(rv, core.status().revision(), settings.retryAfterSeconds());
            case TOO_MANY_READS ->
                error = KubeError.of(429, "TooManyRequests", opening.status().getMessage());
            default -> error = KubeError.unavailable(opening.status().getMessage(), settings.retryAfterSeconds());
        }
        exchange.setStatusCode(error.code());
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
        if (error.retryAfterSeconds() > 0) {
            exchange.getResponseHeaders().put(Headers.RETRY_AFTER, Integer.toString(error.retryAfterSeconds()));
        }
        exchange.getResponseSender().send(ByteBuffer.wrap(error.statusJson()));
    }

    private static String contentType(KubeFormat format) {
        return KubeEncodings.of(format).mediaType();
    }

    /**
     * kube-apiserver's validation of a watch's {@code ListOptions} (k8s.io/apimachinery
     * {@code validateWatchOptions}): 422 Invalid naming every broken rule. {@code sendInitialEvents}
     * counts as given whatever its value, as Go's pointer does.
     */
    private static void validate(
            String initialEventsText, boolean sendInitialEvents, boolean allowBookmarks, String match, String cont)
            throws KubeError {
        List<String> errors = new ArrayList<>();
        if (initialEventsText != null && !"NotOlderThan".equals(match)) {
            errors.add("resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                    + "NotOlderThan");
        }
        if (sendInitialEvents && !allowBookmarks) {
            // The end of the initial events is a bookmark: without bookmarks the client would never see it.
            errors.add(
                    "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true");
        }
        if (match != null && !match.isEmpty()) {
            if (initialEventsText == null) {
                errors.add("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                        + "sendInitialEvents is provided");
            }
            if (!match.equals("NotOlderThan")) {
                errors.add("resourceVersionMatch: Unsupported value: " + KubeParams.quote(match)
                        + ": supported values: \"NotOlderThan\"");
            }
            if (cont != null && !cont.isEmpty()) {
                errors.add("resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is "
                        + "provided");
            }
        }
        if (!errors.isEmpty()) {
            throw KubeError.invalidListOptions(errors);
        }
    }
}

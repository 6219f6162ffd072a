package io.watchfanout.fanout.v1;

import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.HeaderValues;
import io.undertow.util.Headers;
import io.undertow.util.HttpString;
import io.undertow.util.SameThreadExecutor;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.Verb;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpAccess;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.HttpStatuses;
import io.watchfanout.fanout.transport.QueryParams;
import io.watchfanout.fanout.transport.WatchStreams;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.Opening;
import io.watchfanout.fanout.watch.Statuses;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSpec;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.concurrent.CompletionException;

/**
 * {@code GET /v1/watch} (README.md, "The watch protocol"). Runs on the IO thread and never blocks:
 * the watch is opened through the core's one entry by the port's {@link WatchStreams}, as every
 * front end's is (a {@code resourceVersion} ahead of the node waits on the core's revision
 * waiters with a timer), and streamed by them. Errors found before streaming get
 * their HTTP status and a JSON {@code Status} (event streams: see below); after that, an ERROR
 * frame.
 *
 * <p>Server-Sent Events ({@code Accept: text/event-stream}) and {@code Last-Event-ID}: an
 * EventSource reconnects to the same URL and adds the header with the last {@code id} it
 * received, which the node only puts where resuming is safe (the end of a revision for this
 * watcher, or a bookmark; see {@code SseFrames}). The header therefore wins over the URL: with
 * {@code Last-Event-ID: N} the stream resumes exactly like {@code resourceVersion=N} whatever
 * the URL's {@code resourceVersion} (the starting point of the first connection, which the
 * client cannot change), and {@code sendInitialEvents} is ignored (the client received the
 * initial events up to the bookmark whose id it sends). The header is read only for
 * {@code text/event-stream}; other encodings resume by {@code resourceVersion} alone.
 *
 * <p>An event stream whose parameters parsed is never refused with an HTTP error: a resume
 * older than the history (410 Expired), a revision the node does not reach in time (504), a
 * node not ready or shutting down (503), too many reads of older history (429) get 200, the
 * {@code retry:} line and one ERROR frame ({@link WatchErrors#watchError}), because an EventSource
 * closes for good on a non-200 answer without showing the page why. JSON and protobuf watches
 * keep the HTTP statuses that Kubernetes clients act on.
 *
 * <p>{@code sendInitialEvents=true&resourceVersion=N} (Kubernetes' watch-list, which clients send
 * with {@code resourceVersionMatch=NotOlderThan}): the stream waits, as any watch ahead of the
 * node, until the node reaches N, then sends the initial state at the node's revision S at that
 * moment (S &gt;= N) and the events after S. {@code resourceVersionMatch} is checked by
 * {@link ListRead#checkWatch}: only {@code NotOlderThan}, and only with {@code sendInitialEvents}.
 *
 * <p>Access (README.md, "Security"): the request is authenticated first (401), then the watch of
 * its normalised range is authorized (403), then admitted (403, 429 at a limit) before the watch
 * is opened, as the other front ends admit theirs, so that a grant is held while the watch waits
 * for its revision and while its stream is open; the stream
 * tells the grant when it ends, and a grant the reloaded policy revokes ends the stream with an
 * ERROR frame carrying 403. Event streams get these refusals as any other (see above).
 */
final class WatchHandler implements HttpHandler {
    /** The parameters of {@code GET /v1/watch}; any other is refused. */
    static final List<String> PARAMETERS = List.of(
            "key",
            "prefix",
            "rangeEnd",
            "resourceVersion",
            "resourceVersionMatch",
            "allowWatchBookmarks",
            "sendInitialEvents",
            "timeoutSeconds",
            "sinceTime");

    private static final HttpString LAST_EVENT_ID = new HttpString("Last-Event-ID");

    private final WatchCore core;
    private final HttpSettings settings;

    private final WatchStreams streams;
    private final HttpAccess access;

    /** @param streams the HTTP port's watch streams */
    WatchHandler(WatchCore core, HttpSettings settings, WatchStreams streams, HttpAccess access) {
        this.core = core;
        this.settings = settings;
        this.streams = streams;
        this.access = access;
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) {
        WatchSpec spec;
        long timeoutSeconds;
        Instant sinceTime;
        Identity identity;
        try {
            identity = access.authenticate(exchange, "http-watch");
            QueryParams q = QueryParams.parse(exchange.getQueryString());
            q.only("/v1/watch", PARAMETERS);
            KeyRange range = KeyRangeParams.parse(q);
            long rv = q.nonNegative("resourceVersion", 0, "a revision");
            boolean bookmarks = q.bool("allowWatchBookmarks");
            boolean initial = q.bool("sendInitialEvents");
            ListRead.checkWatch(q);
            timeoutSeconds = q.nonNegative("timeoutSeconds", 0, "seconds");
            sinceTime = sinceTime(q, rv, initial);
            Encoding encoding =
                    AcceptHeader.negotiate(exchange.getRequestHeaders().getFirst(Headers.ACCEPT), true);
            if (encoding == WatchEventEncodings.SSE) {
                HeaderValues ids = exchange.getRequestHeaders().get(LAST_EVENT_ID);
                if (ids != null && ids.size() > 1) {
                    // As a repeated query parameter: two resume points are ambiguous, not a choice to make.
                    throw new ApiException(HttpStatuses.badRequest(
                            "header Last-Event-ID given " + ids.size() + " times (expected: at most once)"));
                }
                long lastEventId = lastEventId(ids == null ? null : ids.getFirst());
                if (lastEventId >= 0) {
                    rv = lastEventId;
                    initial = false;
                    // A reconnect resumes where the stream was, not at the first connection's time.
                    sinceTime = null;
                }
            }
            access.authorize(identity, Verb.WATCH, range, V1Api.watchApi(encoding));
            V1Api.checkServing(core);
            spec = WatchSpec.of(range, encoding)
                    .from(rv)
                    .bookmarks(bookmarks)
                    .initialEvents(initial)
                    .startBookmark(sinceTime != null)
                    .build();
        } catch (ApiException e) {
            refuse(exchange, e);
            return;
        }
        if (sinceTime == null) {
            open(exchange, spec, timeoutSeconds, identity);
        } else {
            Instant since = sinceTime;
            // Dispatched (on this same IO thread) so that Undertow keeps the exchange open after
            // handleRequest returns, while the time is looked up.
            exchange.dispatch(
                    SameThreadExecutor.INSTANCE, () -> startSince(exchange, spec, since, timeoutSeconds, identity));
        }
    }

    /**
     * {@code sinceTime}: the events from the first revision recorded at or after an RFC 3339 time, which
     * Kafka's time index of the events topic finds; not with resourceVersion or sendInitialEvents.
     */
    private Instant sinceTime(QueryParams q, long rv, boolean initial) throws ApiException {
        String raw = q.text("sinceTime");
        if (raw == null) {
            return null;
        }
        if (rv != 0 || initial) {
            throw new ApiException(HttpStatuses.badRequest("sinceTime=" + raw + " with "
                    + (initial ? "sendInitialEvents" : "resourceVersion") + " (expected: one starting point)"));
        }
        if (core.olderHistory() == null) {
            throw new ApiException(
                    HttpStatuses.badRequest("sinceTime needs the events topic as history, which this node "
                            + "does not read (--deep-read-max-readers 0)"));
        }
        try {
            return OffsetDateTime.parse(raw).toInstant();
        } catch (DateTimeParseException e) {
            throw new ApiException(HttpStatuses.badRequest(
                    "sinceTime=" + raw + " (expected: an RFC 3339 time such as " + "2026-12-01T10:00:00Z)"));
        }
    }

    /** Resolves {@code sinceTime} to a revision off the IO thread, then starts like a resourceVersion. */
    private void startSince(
            HttpServerExchange exchange, WatchSpec spec, Instant time, long timeoutSeconds, Identity identity) {
        core.olderHistory()
                .revisionAt(time)
                .whenComplete((cursor, error) -> exchange.getIoThread().execute(() -> {
                    if (error != null) {
                        Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                        if (cause instanceof HistoryExpiredException expired) {
                            refuse(exchange, new ApiException(Statuses.expired(expired.getMessage())));
                        } else {
                            refuse(
                                    exchange,
                                    new ApiException(
                                            Statuses.unavailable(
                                                    "could not find sinceTime in the events topic: " + cause),
                                            settings.retryAfterSeconds()));
                        }
                        return;
                    }
                    long from = cursor < 0 ? core.status().revision() : cursor;
                    open(
                            exchange,
                            WatchSpec.of(spec.range(), spec.encoding())
                                    .from(Math.max(from, 1))
                                    .bookmarks(spec.allowBookmarks())
                                    .startBookmark(true)
                                    .build(),
                            timeoutSeconds,
                            identity);
                }));
    }

    /**
     * The revision named by a {@code Last-Event-ID} header, or -1 when there is none (absent or
     * empty: an EventSource sends none before its first id).
     *
     * @throws ApiException 400 when it is not a revision
     */
    static long lastEventId(String header) throws ApiException {
        if (header == null || header.isBlank()) {
            return -1;
        }
        String v = header.trim();
        try {
            long n = Long.parseLong(v);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new ApiException(HttpStatuses.badRequest("header Last-Event-ID: \"" + v
                + "\" (expected: the id of a frame " + "of this stream, a non-negative revision)"));
    }

    /**
     * Admits the watch and opens it through the port's watch streams, which wait for its revision
     * (README.md, errors: 503, 504) and stream it; a refusal gets its HTTP error or, for an event
     * stream, its ERROR frame.
     */
    private void open(HttpServerExchange exchange, WatchSpec spec, long timeoutSeconds, Identity identity) {
        WatchGrant grant;
        try {
            grant = access.admitWatch(identity, spec.range(), V1Api.watchApi(spec.encoding()));
        } catch (ApiException e) {
            refuse(exchange, e);
            return;
        }
        streams.open(
                exchange,
                spec,
                timeoutSeconds,
                spec.encoding().mediaType(),
                grant,
                spec.encoding() == WatchEventEncodings.SSE ? WatchErrors.sseRetry(settings.retryAfterSeconds()) : null,
                opening -> refuse(
                        exchange,
                        new ApiException(
                                opening.status(),
                                opening.outcome() == Opening.Outcome.EXPIRED ? 0 : settings.retryAfterSeconds())));
    }

    /**
     * Answers a watch refused before streaming: the plain HTTP error, or for an event stream whose
     * parameters parsed a 200 stream with one ERROR frame ({@link WatchErrors#watchError}).
     */
    void refuse(HttpServerExchange exchange, ApiException e) {
        WatchErrors.watchError(exchange, e, core.frameEncoder(), settings.retryAfterSeconds());
    }
}

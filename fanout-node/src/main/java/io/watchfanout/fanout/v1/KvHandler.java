package io.watchfanout.fanout.v1;

import com.google.protobuf.ByteString;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ReadMode;
import io.watchfanout.fanout.read.RevisionWait;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.Verb;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpAccess;
import io.watchfanout.fanout.transport.HttpSettings;
import io.watchfanout.fanout.transport.HttpStatuses;
import io.watchfanout.fanout.transport.QueryParams;
import io.watchfanout.fanout.transport.Responses;
import io.watchfanout.fanout.watch.Arrival;
import io.watchfanout.fanout.watch.CurrentRevision;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.ListPage;
import io.watchfanout.fanout.watch.Statuses;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.schema.v1.KeyValueList;
import java.util.List;

/**
 * {@code GET /v1/kv}: a range read from the cache (README.md, "The watch protocol"), with
 * Kubernetes' list semantics for {@code resourceVersion}, {@code resourceVersionMatch},
 * {@code limit} and {@code continue} ({@link ListRead} has the table and the 400s). Runs on a
 * worker thread: a big list is encoded there, off the IO threads, and a read ahead of the node
 * blocks it for up to {@code --resource-version-wait} (then 504 Timeout).
 *
 * <p>Every page of a paged list is read at the revision of the first page, carried in the
 * continue token; a token, or an {@code Exact} revision, older than the history window gets 410
 * Expired, as Kubernetes answers an expired continue or a compacted exact read. A page with a
 * continue token carries {@code remainingItemCount}: counted once on the first page (a walk over
 * the rest of the range), then carried in the token and decreased page by page, so later pages
 * cost only their own key-values.
 *
 * <p>Access (README.md, "Security"): the request is authenticated first (401), then reading its
 * whole normalised range is authorized (403).
 */
final class KvHandler implements HttpHandler {
    /** The parameters of {@code GET /v1/kv}; any other is refused. */
    static final List<String> PARAMETERS =
            List.of("key", "prefix", "rangeEnd", "resourceVersion", "resourceVersionMatch", "limit", "continue");

    private final WatchCore core;
    private final HttpSettings settings;
    /** Waits for a revision ahead of the node, and for etcd's revision on a list without resourceVersion. */
    private final RevisionWait revisionWait;

    private final HttpAccess access;

    KvHandler(WatchCore core, HttpSettings settings, CurrentRevision currentRevision, HttpAccess access) {
        this.core = core;
        this.settings = settings;
        this.revisionWait = new RevisionWait(core, settings.resourceVersionWait(), currentRevision);
        this.access = access;
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) throws InterruptedException {
        if (exchange.isInIoThread()) {
            exchange.dispatch(this);
            return;
        }
        try {
            Identity identity = access.authenticate(exchange, V1Api.LIST_API);
            QueryParams q = QueryParams.parse(exchange.getQueryString());
            q.only("/v1/kv", PARAMETERS);
            KeyRange range = KeyRangeParams.parse(q);
            access.authorize(identity, Verb.READ, range, V1Api.LIST_API);
            ListRead read = ListRead.parse(q);
            Encoding encoding =
                    AcceptHeader.negotiate(exchange.getRequestHeaders().getFirst(Headers.ACCEPT), false);
            V1Api.checkServing(core);
            long at = 0;
            ByteString from = null;
            switch (read.mode()) {
                case CONTINUE -> {
                    ContinueToken t = read.token();
                    if (!range.contains(t.nextKey()) && !t.nextKey().equals(range.start())) {
                        throw new ApiException(HttpStatuses.badRequest("parameter continue: the token's next key \""
                                + KeyRange.printable(t.nextKey()) + "\" is outside " + range
                                + " (expected: the same key, prefix and rangeEnd as the first page)"));
                    }
                    at = t.revision();
                    from = t.nextKey();
                }
                case MOST_RECENT -> awaitConsistent(); // most recent, as Kubernetes reads it: a consistent read
                case ANY -> {}
                case NOT_OLDER_THAN -> awaitRevision(read.resourceVersion());
                case EXACT -> {
                    awaitRevision(read.resourceVersion());
                    at = read.resourceVersion();
                }
                default -> throw new IllegalStateException(read.mode().toString());
            }
            long limit = read.limit();
            boolean firstOfPaged = limit > 0 && read.mode() != ReadMode.CONTINUE;
            ListPage page;
            try {
                page = core.list(
                        range,
                        from,
                        at,
                        limit == 0 || limit > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) limit,
                        firstOfPaged);
            } catch (HistoryExpiredException e) {
                throw new ApiException(Statuses.expired(e.getMessage()));
            }
            KeyValueList.Builder list =
                    KeyValueList.newBuilder().addAllKvs(page.kvs()).setResourceVersion(page.revision());
            if (page.nextKey() != null) {
                long remaining = firstOfPaged
                        ? page.remaining()
                        : read.token().remainingAfter(page.kvs().size());
                list.setContinue(new ContinueToken(page.revision(), page.nextKey(), remaining)
                        .encode(ContinueToken.Form.COMPACT));
                if (remaining >= 0) {
                    list.setRemainingItemCount(remaining);
                }
            }
            KeyValueList answer = list.build();
            Responses.ok(
                    exchange,
                    encoding.mediaType(),
                    encoding == WatchEventEncodings.JSON ? ProtoJson.toJson(answer) : answer.toByteArray());
        } catch (ApiException e) {
            Responses.error(exchange, e);
        }
    }

    /** Waits for etcd's current revision, or answers 503 when etcd cannot be asked and 503/504 after the wait. */
    private void awaitConsistent() throws ApiException, InterruptedException {
        RevisionWait.Consistent c = revisionWait.awaitConsistent();
        if (c.unlearned() != null) {
            throw new ApiException(
                    Statuses.notReady("a list without resourceVersion is a consistent read, and etcd's "
                            + "current revision could not be learned: " + c.unlearned()
                            + "; ask with resourceVersion=0 for the node's revision"),
                    settings.retryAfterSeconds());
        }
        if (!c.reached()) {
            throw new ApiException(c.arrival().status(), settings.retryAfterSeconds());
        }
    }

    /** Blocks this worker thread until the cache reaches {@code rv} (at most the wait), or answers 503/504. */
    private void awaitRevision(long rv) throws ApiException, InterruptedException {
        Arrival a = revisionWait.await(rv);
        if (!a.reached()) {
            throw new ApiException(a.status(), settings.retryAfterSeconds());
        }
    }
}

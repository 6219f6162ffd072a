package io.watchfanout.fanout.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RangeResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.read.RevisionWait;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.Verb;
import io.watchfanout.fanout.watch.Arrival;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.ListPage;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.schema.v1.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * {@code etcdserverpb.KV/Range} from the cache, as etcd 3.5 answers it ({@code applierV3backend.Range}):
 * {@code serializable} reads at the node's revision; the default, a linearizable read, learns
 * etcd's current revision with one count-only read of the request's key (as kube-apiserver's
 * consistent reads from its cache do, KEP-2340), waits up to {@code --resource-version-wait} for the
 * cache to reach it and answers from the cache, else forwards the read to etcd (counted). A
 * {@code revision} outside what the cache holds (older than its history, newer than it) is
 * forwarded, so that etcd gives its own answer or error. {@code limit}, {@code count_only},
 * {@code keys_only}, the min/max mod and create revision filters, {@code sort_order} and
 * {@code sort_target}, {@code more} and {@code count} as etcd: {@code count} is every key of the
 * range, the filters apply before the sort and the limit, and without a sort order only the first
 * {@code limit + 1} keys are sorted (etcd's store fetches no more). One difference: ties of a sort are kept
 * in key order (etcd's sort is not stable). The header's revision is the cache's revision.
 *
 * <p>Reading the request's whole normalised range must be allowed to the caller
 * ({@link Verb#READ}; README.md, "Security"), else {@code PERMISSION_DENIED}
 * {@code "etcdserver: permission denied"}, before the cache or etcd is asked.
 *
 * <p>The other KV methods are not in this service: the API's fallback forwards them.
 * Thread-safety: called on grpc's threads; stateless but for its metrics.
 */
final class EtcdRangeService {
    /** Keys read from the cache under its lock at a time, so that a large range never holds up dispatch long. */
    private static final int PAGE = 1000;

    private static final Context.Key<Metadata> CALLER = Context.key("watchfanout-etcd-caller");

    private final WatchCore core;
    private final EtcdHeaders headers;
    private final EtcdApiStats stats;
    private final Channel etcd;
    /** {@link #etcd} with the node's own etcd user: for callers that brought no etcd token. */
    private final Channel etcdAsNode;

    private final Duration wait;
    /** A consistent read's wait for the revision etcd names (learned per call, with the caller's credentials). */
    private final RevisionWait revisionWait;

    private final Executor pool;
    private final AccessControl access;

    EtcdRangeService(
            WatchCore core,
            EtcdHeaders headers,
            EtcdApiStats stats,
            Channel etcd,
            Channel etcdAsNode,
            Duration wait,
            Executor pool,
            AccessControl access) {
        this.access = access;
        this.etcdAsNode = etcdAsNode;
        this.core = core;
        this.headers = headers;
        this.stats = stats;
        this.etcd = etcd;
        this.wait = wait;
        this.revisionWait = new RevisionWait(core, wait, null);
        this.pool = pool;
    }

    /** The service: only {@code Range}, with the caller's metadata kept for forwarding. */
    ServerServiceDefinition definition() {
        ServerServiceDefinition def = ServerServiceDefinition.builder(KVGrpc.SERVICE_NAME)
                .addMethod(KVGrpc.getRangeMethod(), ServerCalls.asyncUnaryCall(this::range))
                .build();
        return ServerInterceptors.intercept(def, new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(
                    ServerCall<Q, R> call, Metadata md, ServerCallHandler<Q, R> next) {
                return Contexts.interceptCall(
                        Context.current().withValue(CALLER, EtcdForwarder.stripped(md)), call, md, next);
            }
        });
    }

    void range(RangeRequest req, StreamObserver<RangeResponse> out) {
        if (req.getKey().isEmpty()) {
            out.onError(Status.INVALID_ARGUMENT
                    .withDescription("etcdserver: key is not provided")
                    .asRuntimeException());
            return;
        }
        KeyRange asked = ForwardedAccess.range(req.getKey(), req.getRangeEnd());
        if (asked != null && !access.isOpen()) {
            try {
                if (EtcdAuth.identity() == null) {
                    throw new AccessDeniedException("a call without an identity");
                }
                access.authorize(EtcdAuth.identity(), Verb.READ, asked, EtcdAuth.api());
            } catch (AccessDeniedException e) {
                out.onError(Status.PERMISSION_DENIED
                        .withDescription(ForwardedAccess.PERMISSION_DENIED)
                        .asRuntimeException());
                return;
            }
        }
        Metadata caller = CALLER.get();
        if (!core.readiness().isRebuilt()) {
            forward(req, caller, out);
            return;
        }
        long rev = req.getRevision();
        if (rev > 0) {
            if (rev < core.status().historyStartRevision()
                    || rev > core.status().revision()) {
                forward(req, caller, out);
            } else {
                answer(req, rev, caller, out);
            }
            return;
        }
        if (req.getSerializable()) {
            answer(req, 0, caller, out);
            return;
        }
        if (etcd == null) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("a linearizable read needs etcd's current revision, and this "
                            + "node has no --etcd-endpoints (ask with serializable=true for the node's revision)")
                    .asRuntimeException());
            return;
        }
        consistentRead(req, caller, out);
    }

    /** Learns etcd's revision, then answers from the cache once it is there, or forwards after the wait. */
    private void consistentRead(RangeRequest req, Metadata caller, StreamObserver<RangeResponse> out) {
        RangeRequest probe = RangeRequest.newBuilder()
                .setKey(req.getKey())
                .setCountOnly(true)
                .build();
        CompletableFuture<Long> learned = new CompletableFuture<>();
        ClientCalls.asyncUnaryCall(call(caller, wait.plusSeconds(5)), probe, new StreamObserver<>() {
            @Override
            public void onNext(RangeResponse r) {
                headers.learn(r.getHeader());
                learned.complete(r.getHeader().getRevision());
            }

            @Override
            public void onError(Throwable t) {
                learned.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {}
        });
        revisionWait.awaitConsistent(learned, pool, consistent -> {
            Throwable t = consistent.unlearned();
            if (t != null) {
                // etcd's own answer (no leader, permission denied, unauthenticated) is the caller's.
                out.onError(
                        t instanceof StatusRuntimeException
                                ? t
                                : Status.fromThrowable(t).asRuntimeException());
            } else if (consistent.reached()) {
                answer(req, 0, caller, out);
            } else {
                if (consistent.arrival().outcome() == Arrival.Outcome.TIMED_OUT) {
                    stats.consistentReadFallbacks.increment();
                }
                forward(req, caller, out);
            }
        });
    }

    /**
     * A read of etcd for a caller whose range the node allowed: with the caller's own etcd token
     * when it brought one (etcd judges it, as it would without the node), else as the node's own
     * etcd user ({@code --etcd-user}) — a caller known by its certificate or a bearer token has no
     * standing at etcd, and what it may read the node has checked already.
     */
    private io.grpc.ClientCall<RangeRequest, RangeResponse> call(Metadata caller, Duration deadline) {
        Channel ch = caller == null || !caller.containsKey(EtcdCredentials.TOKEN)
                ? etcdAsNode
                : ClientInterceptors.intercept(etcd, MetadataUtils.newAttachHeadersInterceptor(caller));
        CallOptions opts = CallOptions.DEFAULT;
        io.grpc.Deadline d = Context.current().getDeadline();
        opts = d != null ? opts.withDeadline(d) : opts.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
        return ch.newCall(KVGrpc.getRangeMethod(), opts);
    }

    private void forward(RangeRequest req, Metadata caller, StreamObserver<RangeResponse> out) {
        if (etcd == null) {
            out.onError(Status.UNAVAILABLE
                    .withDescription("this range is not in the node's cache and the node has no "
                            + "--etcd-endpoints to forward it to")
                    .asRuntimeException());
            return;
        }
        stats.forwarded.increment();
        ClientCalls.asyncUnaryCall(call(caller, Duration.ofSeconds(30)), req, new StreamObserver<>() {
            @Override
            public void onNext(RangeResponse r) {
                headers.learn(r.getHeader());
                out.onNext(r);
            }

            @Override
            public void onError(Throwable t) {
                out.onError(t);
            }

            @Override
            public void onCompleted() {
                out.onCompleted();
            }
        });
    }

    /** Answers from the cache at {@code atRevision} (0 = its revision); forwards if history runs out meanwhile. */
    private void answer(RangeRequest req, long atRevision, Metadata caller, StreamObserver<RangeResponse> out) {
        RangeResponse r;
        try {
            r = fromCache(req, atRevision);
        } catch (HistoryExpiredException e) {
            forward(req, caller, out);
            return;
        }
        stats.rangesFromCache.increment();
        out.onNext(r);
        out.onCompleted();
    }

    private RangeResponse fromCache(RangeRequest req, long atRevision) throws HistoryExpiredException {
        long headerRevision = core.status().revision();
        long at = atRevision == 0 ? headerRevision : atRevision;
        RangeResponse.Builder resp = RangeResponse.newBuilder().setHeader(headers.at(headerRevision));
        KeyRange range;
        try {
            range = KeyRange.of(req.getKey(), req.getRangeEnd());
        } catch (IllegalArgumentException e) {
            // A range end before the key: etcd finds no key.
            return resp.build();
        }
        List<KeyValue> kvs = new ArrayList<>();
        ByteString from = null;
        do {
            ListPage page = core.list(range, from, at, PAGE);
            kvs.addAll(page.kvs());
            from = page.nextKey();
        } while (from != null);
        resp.setCount(kvs.size());
        if (req.getCountOnly()) {
            return resp.build();
        }
        // etcd fetches only limit + 1 keys (in key order) unless a sort order or a filter is given, and
        // sorts and truncates what it fetched: a sort target without an order sorts those keys alone.
        boolean fetchAll = req.getSortOrder() != RangeRequest.SortOrder.NONE
                || req.getMinModRevision() != 0
                || req.getMaxModRevision() != 0
                || req.getMinCreateRevision() != 0
                || req.getMaxCreateRevision() != 0;
        if (!fetchAll && req.getLimit() > 0 && kvs.size() > req.getLimit() + 1) {
            kvs = new ArrayList<>(kvs.subList(0, (int) req.getLimit() + 1));
        }
        kvs.removeIf(kv -> (req.getMaxModRevision() != 0 && kv.getModRevision() > req.getMaxModRevision())
                || (req.getMinModRevision() != 0 && kv.getModRevision() < req.getMinModRevision())
                || (req.getMaxCreateRevision() != 0 && kv.getCreateRevision() > req.getMaxCreateRevision())
                || (req.getMinCreateRevision() != 0 && kv.getCreateRevision() < req.getMinCreateRevision()));
        sort(req, kvs);
        if (req.getLimit() > 0 && kvs.size() > req.getLimit()) {
            kvs = kvs.subList(0, (int) req.getLimit());
            resp.setMore(true);
        }
        for (KeyValue kv : kvs) {
            io.etcd.jetcd.api.KeyValue.Builder b = io.etcd.jetcd.api.KeyValue.newBuilder()
                    .setKey(kv.getKey())
                    .setCreateRevision(kv.getCreateRevision())
                    .setModRevision(kv.getModRevision())
                    .setVersion(kv.getVersion())
                    .setLease(kv.getLease());
            if (!req.getKeysOnly()) {
                b.setValue(kv.getValue());
            }
            resp.addKvs(b);
        }
        return resp.build();
    }

    /** etcd's sort: a target other than the key with no order means ascending; key ascending is the list's own order. */
    private static void sort(RangeRequest req, List<KeyValue> kvs) {
        RangeRequest.SortOrder order = req.getSortOrder();
        RangeRequest.SortTarget target = req.getSortTarget();
        if (target != RangeRequest.SortTarget.KEY && order == RangeRequest.SortOrder.NONE) {
            order = RangeRequest.SortOrder.ASCEND;
        } else if (target == RangeRequest.SortTarget.KEY && order == RangeRequest.SortOrder.ASCEND) {
            order = RangeRequest.SortOrder.NONE;
        }
        if (order == RangeRequest.SortOrder.NONE || order == RangeRequest.SortOrder.UNRECOGNIZED) {
            return;
        }
        Comparator<KeyValue> c = switch (target) {
            case VERSION -> Comparator.comparingLong(KeyValue::getVersion);
            case CREATE -> Comparator.comparingLong(KeyValue::getCreateRevision);
            case MOD -> Comparator.comparingLong(KeyValue::getModRevision);
            case VALUE -> (a, b) -> KeyRange.KEY_ORDER.compare(a.getValue(), b.getValue());
            default -> (a, b) -> KeyRange.KEY_ORDER.compare(a.getKey(), b.getKey());
        };
        kvs.sort(order == RangeRequest.SortOrder.DESCEND ? c.reversed() : c);
    }
}

package io.watchfanout.fanout.etcd;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.WatchCancelRequest;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.LimitExceededException;
import io.watchfanout.fanout.watch.Opening;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSpec;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code etcdserverpb.Watch/Watch} stream served from the cache, with etcd 3.5's server
 * semantics ({@code server/etcdserver/api/v3rpc/watch.go}): many watches per stream, watch ids
 * chosen by the client or assigned from 0 up, {@code start_revision} inclusive (0 = now), a start
 * revision older than the node's history answered with {@code compact_revision} (the oldest start
 * revision the node can serve) and {@code canceled}, a future one waited for, cancel, progress
 * notifications for quiet watches, {@code WatchProgressRequest}, fragments.
 *
 * <p>Each watch is a {@link Watch} of the core with the etcd encodings: responses are the
 * watch's own header and id followed by the event frames that every watch of the node shares.
 * A response holds whole revisions, possibly several of them (up to
 * {@link #MAX_FRAMES_PER_RESPONSE} events, then to the end of the last revision), as etcd batches a
 * catching-up watcher's. Flow control is grpc's, with a small threshold ({@link #ON_READY_BYTES}):
 * while the client's stream is not ready, no watcher is polled, so a slow client's watchers are
 * parked by the core and catch up from history like slow HTTP streams, and no further request is
 * read, so that a client sending requests it never reads the answers to is held back as etcd's
 * receive loop holds it.
 *
 * <p>Access (README.md, "Security"): each create request is admitted on its normalised range
 * for the stream's caller. A refusal is etcd 3.5's answer to a watch it does not permit, a
 * response with {@code created} and {@code canceled} and the reason
 * {@link #PERMISSION_DENIED_REASON}; a limit gets the same shape with a reason naming the limit
 * and when to retry; a watch whose grant the reloaded policy revokes is canceled with etcd's
 * reason and why. The grant ends whenever the watch does (canceled by the client or the node,
 * or with the stream).
 *
 * <p>Thread-safety: all state belongs to the stream's lane ({@link WatchLanes.Lane}, one thread);
 * grpc's callbacks and ticks are submitted to it, wake-ups coalesced per lane.
 */
final class EtcdWatchStream implements StreamObserver<WatchRequest> {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdWatchStream.class);
    /**
     * etcd's {@code clientv3.InvalidWatchID}: the watch id of an answer to a progress request, and of
     * a create request that etcd's mvcc refused (an empty range, a duplicate id).
     */
    static final long INVALID_WATCH_ID = -1;
    /** etcd's default {@code --max-request-bytes}: the size above which a fragmenting watch's responses split. */
    static final int MAX_RESPONSE_BYTES = 1536 * 1024;
    /** etcd's {@code mvcc.ErrEmptyWatcherRange}: a range end that does not sort after the key. */
    static final String EMPTY_RANGE_REASON = "mvcc: watcher range is empty";

    /**
     * Fields of etcd 3.5's {@code WatchCreateRequest} that the API classes at hand (jetcd's
     * {@code rpc.proto}) do not declare; protobuf keeps them as unknown fields.
     */
    private static final int WATCH_CREATE_WATCH_ID = 7;

    private static final int WATCH_CREATE_FRAGMENT = 8;

    /** etcd 3.5's {@code cancel_reason} for a watch it does not permit ({@code rpctypes.ErrGRPCPermissionDenied.Error()}). */
    static final String PERMISSION_DENIED_REASON =
            "rpc error: code = PermissionDenied desc = " + ForwardedAccess.PERMISSION_DENIED;

    /**
     * Bytes of responses a stream lets wait in grpc's transport (not yet written to the socket) before
     * it stops polling its watches: grpc's default is 32 KiB, which, when each response took a
     * transport buffer of at least 4 KiB, held 1.8 GiB of direct memory at 5,000 streams of a
     * saturated client (docs/BENCHMARKS.md, "The etcd API").
     */
    static final int ON_READY_BYTES = 8 * 1024;

    /**
     * Frames a watch takes from its watcher for one response (then up to the end of the last
     * revision): bounds the copy a catching-up watch puts into grpc's transport at once, where a
     * history step of thousands of events made one response of megabytes per watcher. etcd bounds
     * an unsynced watcher's batch too (1,000 revisions, {@code watchBatchMaxRevs}).
     */
    static final int MAX_FRAMES_PER_RESPONSE = 16;

    /** etcd 3.5's {@code WatchResponse.fragment = true}. */
    private static final byte[] FRAGMENT_FIELD = {(byte) (EtcdFrames.FRAGMENT << 3), 1};

    private static final byte[] NO_BYTES = new byte[0];

    private final WatchCore core;
    private final EtcdHeaders headers;
    private final EtcdApiStats stats;
    private final ServerCallStreamObserver<WatchResponseBytes> out;
    private final WatchLanes.Lane serial;
    /**
     * The lane's one response object, refilled for each response of events, where its transport
     * copies a response as it is sent (null: a new object each, for a transport that passes it on).
     */
    private final WatchResponseBytes reused;

    private final Map<Long, EtcdWatch> watches = new LinkedHashMap<>();
    private final AtomicBoolean pumpScheduled = new AtomicBoolean();
    /** The lane's list for polled frames (see {@link WatchLanes.Lane#polled}). */
    private final List<ByteBuffer> polled;
    /**
     * Watches other than {@link #first} woken since they were last polled, each at most once (its
     * {@code queued} flag).
     */
    private final ConcurrentLinkedDeque<EtcdWatch> ready = new ConcurrentLinkedDeque<>();
    /*
     * The stream's first watch, until released; woken, it is in no queue, only flagged. A queue's
     * node per wake-up is a young object stored into the stream's queue, which lives in the old
     * generation: a card G1 scans at the next young collection, for each stream that got an event.
     */
    private EtcdWatch first;

    private final Duration progressNotifyInterval;
    private final AccessControl access;
    /** The stream's caller, from its call's context. */
    private final Identity identity;

    private final String api;
    private long nextWatchId;
    private boolean progressRequested;
    private boolean closed;
    /** A watch was canceled by the node during a pump: the pump takes it out of {@link #watches} after its loop. */
    private boolean anyCanceled;
    /**
     * A request was handled while the client was not taking responses: the next is asked for once it
     * does. etcd's receive loop likewise blocks while its control responses wait to be sent; without
     * it a client that sends requests and never reads had every answer (each a transport buffer)
     * queued in the node's direct memory until it ran out.
     */
    private boolean requestWaiting;

    EtcdWatchStream(
            WatchCore core,
            EtcdHeaders headers,
            EtcdApiStats stats,
            ServerCallStreamObserver<WatchResponseBytes> out,
            WatchLanes.Lane lane,
            Duration progressNotifyInterval,
            AccessControl access) {
        this.core = core;
        this.access = access;
        this.identity = EtcdAuth.identity();
        this.api = EtcdAuth.api();
        this.headers = headers;
        this.stats = stats;
        this.out = out;
        this.serial = lane;
        this.reused = lane.response();
        this.polled = lane.polled();
        stats.watchStreams.increment();
        // Little waits in grpc's transport buffers: each response there is a copy of its own, while a
        // watch's queue in the core holds the shared frames. A client that reads slower than events
        // come leaves its backlog in the core (its watchers are parked and catch up from history, as
        // slow HTTP streams), not in copies per watcher.
        out.setOnReadyThreshold(ON_READY_BYTES);
        // The client can take more: pump the woken watches (a watch cut short by flow control is first).
        out.setOnReadyHandler(this::wakeUp);
        out.setOnCancelHandler(() -> serial.execute(this::closeAll));
        // One request at a time, the next once the client takes responses (requestWaiting).
        out.disableAutoRequest();
        out.request(1);
        this.progressNotifyInterval = progressNotifyInterval;
    }

    // ---- grpc's callbacks ---------------------------------------------------------------

    @Override
    public void onNext(WatchRequest request) {
        serial.execute(() -> {
            handle(request);
            requestNext();
        });
    }

    /** Asks grpc for the client's next request, or, while the client takes no responses, marks it waiting. */
    private void requestNext() {
        if (closed) {
            return;
        }
        if (out.isReady()) {
            requestWaiting = false;
            out.request(1);
        } else {
            requestWaiting = true;
        }
    }

    @Override
    public void onError(Throwable t) {
        serial.execute(this::closeAll);
    }

    @Override
    public void onCompleted() {
        // etcd keeps a half-closed stream open (its receive loop returns, its send loop goes on);
        // the stream ends when the client cancels it.
    }

    /** Frames are waiting or the client can take more: pump once, on the stream's lane. */
    void wakeUp() {
        if (pumpScheduled.compareAndSet(false, true)) {
            serial.wake(this);
        }
    }

    /** The lane runs the pump that {@link #wakeUp} asked for. */
    void pumpWoken() {
        pumpScheduled.set(false);
        pump();
    }

    // ---- the stream's executor ---------------------------------------------------------

    private void handle(WatchRequest request) {
        if (closed) {
            return;
        }
        switch (request.getRequestUnionCase()) {
            case CREATE_REQUEST -> create(request.getCreateRequest());
            case CANCEL_REQUEST -> cancel(request.getCancelRequest());
            case PROGRESS_REQUEST -> {
                progressRequested = true;
                pump();
            }
            default -> {
                // etcd ignores a request it does not know.
            }
        }
    }

    private void create(WatchCreateRequest c) {
        if (!core.readiness().isRebuilt()) {
            end(Status.UNAVAILABLE.withDescription("this node is not serving: "
                    + (core.readiness().failure() != null
                            ? core.readiness().failure()
                            : "its cache is rebuilding from Kafka")));
            return;
        }
        long id = unknownVarint(c, WATCH_CREATE_WATCH_ID);
        KeyRange range = range(c.getKey(), c.getRangeEnd());
        if (range == null) {
            // etcd's mvcc refuses a range whose end does not sort after its key before it picks an id.
            refused(INVALID_WATCH_ID, EMPTY_RANGE_REASON);
            return;
        }
        io.watchfanout.fanout.security.WatchGrant grant;
        try {
            grant = access.admitWatch(identity, range, api);
        } catch (AccessDeniedException e) {
            refused(id, PERMISSION_DENIED_REASON);
            return;
        } catch (LimitExceededException e) {
            refused(
                    id,
                    "etcdserver: too many watches: " + e.getMessage() + "; retry in " + e.retryAfterSeconds() + " s");
            return;
        }
        if (id == 0) {
            while (watches.containsKey(nextWatchId)) {
                nextWatchId++;
            }
            id = nextWatchId++;
        } else if (watches.containsKey(id)) {
            grant.end("duplicate-id", 0);
            refused(INVALID_WATCH_ID, "mvcc: duplicate watch ID provided on the WatchStream");
            return;
        }
        long start = c.getStartRevision();
        boolean noPut = false;
        boolean noDelete = false;
        for (WatchCreateRequest.FilterType f : c.getFiltersList()) {
            noPut |= f == WatchCreateRequest.FilterType.NOPUT;
            noDelete |= f == WatchCreateRequest.FilterType.NODELETE;
        }
        // The watcher's cursor: it gets every event after it. etcd's revision 1 (an empty store) holds no
        // event, so a watch from 1 is a watch of everything after 1.
        long from = start <= 0 ? 0 : Math.max(start - 1, 1);
        WatchSpec spec = WatchSpec.of(range, c.getPrevKv() ? EtcdEncodings.ETCD_PREV_KV : EtcdEncodings.ETCD)
                .from(from)
                .bookmarks(c.getProgressNotify())
                .noPut(noPut)
                .noDelete(noDelete)
                .progressInterval(c.getProgressNotify() ? progressNotifyInterval : null)
                .build();
        EtcdWatch w = new EtcdWatch(id, spec, unknownVarint(c, WATCH_CREATE_FRAGMENT) != 0, watches.isEmpty(), this);
        if (w.first) {
            first = w;
        }
        w.grant = grant;
        watches.put(id, w);
        grant.onRevoked(reason -> serial.execute(() -> revoked(w, reason)));
        send(WatchResponse.newBuilder()
                .setHeader(headers.at(core.status().revision()))
                .setWatchId(id)
                .setCreated(true)
                .build());
        // A negative start revision is older than any history: etcd's unsynced watcher finds it below
        // the compaction and cancels it, as here.
        if (start < 0 || (start > 0 && from < core.servableFromRevision())) {
            compacted(w);
        } else {
            // A future start revision: etcd's watch waits for it; so does this one, without a deadline.
            w.cancelOpen = core.open(spec, w, null, serial, opening -> opened(w, opening));
        }
    }

    /** etcd's answer to a create request it refuses: created and canceled at once. */
    private void refused(long id, String reason) {
        send(WatchResponse.newBuilder()
                .setHeader(headers.at(core.status().revision()))
                .setWatchId(id)
                .setCreated(true)
                .setCanceled(true)
                .setCancelReason(reason)
                .build());
    }

    /** The reloaded policy no longer allows the watch: canceled, as etcd cancels a watch, with why. */
    private void revoked(EtcdWatch w, String why) {
        if (closed || watches.get(w.id) != w) {
            return;
        }
        watches.remove(w.id);
        release(w, "forbidden");
        send(WatchResponse.newBuilder()
                .setHeader(headers.at(core.status().revision()))
                .setWatchId(w.id)
                .setCanceled(true)
                .setCancelReason(PERMISSION_DENIED_REASON + ": " + why)
                .build());
    }

    private static long unknownVarint(WatchCreateRequest c, int field) {
        com.google.protobuf.UnknownFieldSet.Field f = c.getUnknownFields().getField(field);
        List<Long> values = f.getVarintList();
        return values.isEmpty() ? 0 : values.get(values.size() - 1);
    }

    /** etcd's range of a watch: an empty end is one key, {@code "\0"} every key from the key on. */
    private static KeyRange range(ByteString key, ByteString rangeEnd) {
        try {
            return KeyRange.of(key, rangeEnd);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private void opened(EtcdWatch w, Opening opening) {
        w.cancelOpen = null;
        if (closed || watches.get(w.id) != w) {
            if (opening.opened()) {
                opening.watch().close();
            }
            return;
        }
        switch (opening.outcome()) {
            case OPENED:
                w.watcher = opening.watch();
                // Its first poll starts the catch-up from its start revision.
                w.wakeUp();
                return;
            case EXPIRED:
                compacted(w);
                return;
            case TOO_MANY_READS:
                watches.remove(w.id);
                release(w, "too-many-reads");
                send(WatchResponse.newBuilder()
                        .setHeader(headers.at(core.status().revision()))
                        .setWatchId(w.id)
                        .setCanceled(true)
                        .setCancelReason(opening.status().getMessage())
                        .build());
                return;
            default:
                end(Status.UNAVAILABLE.withDescription(
                        "this node stopped serving: " + opening.status().getMessage()));
        }
    }

    private void compacted(EtcdWatch w) {
        watches.remove(w.id);
        release(w, "compacted");
        send(WatchResponse.newBuilder()
                .setHeader(headers.at(core.status().revision()))
                .setWatchId(w.id)
                .setCanceled(true)
                .setCompactRevision(core.servableFromRevision() + 1)
                .setCancelReason("mvcc: required revision has been compacted")
                .build());
    }

    private void cancel(WatchCancelRequest c) {
        EtcdWatch w = watches.remove(c.getWatchId());
        if (w == null) {
            return;
        }
        release(w, "canceled");
        send(WatchResponse.newBuilder()
                .setHeader(headers.at(core.status().revision()))
                .setWatchId(w.id)
                .setCanceled(true)
                .build());
    }

    /** Lets go of the watch's waiter, watcher and grant; {@code reason} is the grant's end. */
    private void release(EtcdWatch w, String reason) {
        if (w == first) {
            first = null;
        }
        if (w.grant != null) {
            w.grant.end(reason, w.frames);
            w.grant = null;
        }
        if (w.cancelOpen != null) {
            w.cancelOpen.run();
            w.cancelOpen = null;
        }
        if (w.watcher != null) {
            w.watcher.close();
            w.watcher = null;
        }
    }

    /** Writes what the watchers have while the client takes it, then answers a pending progress request. */
    private void pump() {
        if (closed) {
            return;
        }
        boolean shutdown = false;
        // Only the watches that were woken: a revision costs the watches it matched, not the stream's all.
        EtcdWatch w;
        // The first watch is taken once per pump, so that one catching up lets the others go too.
        boolean firstTaken = false;
        while (!shutdown && out.isReady() && (w = nextReady(firstTaken)) != null) {
            firstTaken |= w == first;
            // Cleared before polling, so that a wake-up while this runs queues the watch again.
            w.queued.set(false);
            Watch watcher = w.watcher;
            if (watcher == null) {
                continue;
            }
            while (true) {
                if (!out.isReady()) {
                    // grpc calls the ready handler when the client has taken enough; this watch goes first then.
                    if (w.queued.compareAndSet(false, true) && !w.first) {
                        ready.addFirst(w);
                    }
                    break;
                }
                polled.clear();
                int carried = 0;
                if (w.carry != null) {
                    polled.addAll(w.carry);
                    carried = polled.size();
                    w.carry = null;
                }
                Watch.PollResult r = watcher.poll(polled, MAX_FRAMES_PER_RESPONSE);
                if (r == Watch.PollResult.FRAMES && polled.size() - carried >= MAX_FRAMES_PER_RESPONSE) {
                    // More may be waiting: this response ends at a revision boundary, the rest goes next.
                    carryLastRevision(w);
                }
                if (!polled.isEmpty()) {
                    w.frames += polled.size();
                    if (!sendFrames(w, polled)) {
                        break;
                    }
                }
                if (r == Watch.PollResult.FRAMES) {
                    continue;
                } else if (r == Watch.PollResult.END) {
                    // Ended without an error frame (those cancel the watch): the node is shutting down.
                    shutdown = true;
                    break;
                } else {
                    if (r == Watch.PollResult.YIELD) {
                        // Catching up: after the other woken watches.
                        w.wakeUp();
                    }
                    break;
                }
            }
            if (closed) {
                return;
            }
        }
        if (anyCanceled) {
            anyCanceled = false;
            watches.values().removeIf(x -> x.canceled);
        }
        if (shutdown) {
            end(Status.UNAVAILABLE.withDescription("this node is shutting down"));
            return;
        }
        if (requestWaiting) {
            requestNext();
        }
        if (out.isReady() && progressRequested && allSynced()) {
            progressRequested = false;
            stats.progressResponses.increment();
            send(WatchResponse.newBuilder()
                    .setHeader(headers.at(core.status().dispatchedRevision()))
                    .setWatchId(INVALID_WATCH_ID)
                    .build());
        }
    }

    /**
     * Keeps the trailing frames of the last revision in {@link #polled} for the watch's next response,
     * since that revision may go on in frames not polled yet: a response holds whole revisions, as
     * etcd's do. A poll of a single revision is sent whole, whatever its size.
     */
    private void carryLastRevision(EtcdWatch w) {
        int n = polled.size();
        long rev = eventRevision(polled.get(n - 1));
        if (rev < 0) {
            return;
        }
        int cut = n - 1;
        while (cut > 0 && eventRevision(polled.get(cut - 1)) == rev) {
            cut--;
        }
        if (cut == 0) {
            return;
        }
        List<ByteBuffer> tail = polled.subList(cut, n);
        w.carry = new ArrayList<>(tail);
        tail.clear();
    }

    /** An event frame's revision, -1 for another frame. */
    private static long eventRevision(ByteBuffer f) {
        byte[] a = f.array();
        int at = f.arrayOffset() + f.position();
        return EtcdFrames.kind(a, at) == EtcdFrames.Kind.EVENT ? EtcdFrames.revision(a, at, f.remaining()) : -1;
    }

    /** A watch has frames waiting (any thread): queue it, once, for the next pump. */
    void woken(EtcdWatch w) {
        if (!w.first) {
            ready.add(w);
        }
        wakeUp();
    }

    /** The first watch when it is flagged and not yet taken in this pump, else the next queued one. */
    private EtcdWatch nextReady(boolean firstTaken) {
        EtcdWatch f = first;
        return !firstTaken && f != null && f.queued.get() ? f : ready.poll();
    }

    /**
     * Turns one drained batch of frames into responses: events into one response (split when the
     * watch asked for fragments and it is too large), progress frames into empty ones, an error frame
     * into the watch's cancel.
     *
     * @return false when the watch was canceled by an error frame
     */
    private boolean sendFrames(EtcdWatch w, List<ByteBuffer> frames) {
        int from = 0;
        for (int i = 0; i < frames.size(); i++) {
            ByteBuffer f = frames.get(i);
            EtcdFrames.Kind kind = EtcdFrames.kind(f.array(), f.arrayOffset() + f.position());
            if (kind == EtcdFrames.Kind.EVENT) {
                continue;
            }
            sendEvents(w, frames.subList(from, i));
            from = i + 1;
            if (kind == EtcdFrames.Kind.PROGRESS) {
                long rev = EtcdFrames.revision(f.array(), f.arrayOffset() + f.position(), f.remaining());
                stats.progressResponses.increment();
                send(WatchResponse.newBuilder()
                        .setHeader(headers.at(rev))
                        .setWatchId(w.id)
                        .build());
            } else {
                canceledByNode(w, f);
                return false;
            }
        }
        // Nearly always every frame is an event: the list itself, no view of it per response.
        sendEvents(w, from == 0 ? frames : frames.subList(from, frames.size()));
        return true;
    }

    private void sendEvents(EtcdWatch w, List<ByteBuffer> events) {
        if (events.isEmpty()) {
            return;
        }
        if (!w.fragment) {
            sendEventResponse(w, events, false);
            return;
        }
        int from = 0;
        long size = 0;
        for (int i = 0; i < events.size(); i++) {
            int n = events.get(i).remaining();
            if (i > from && size + n > MAX_RESPONSE_BYTES) {
                sendEventResponse(w, events.subList(from, i), true);
                from = i;
                size = 0;
            }
            size += n;
        }
        sendEventResponse(w, events.subList(from, events.size()), false);
    }

    /**
     * One response: the header field of its last event's revision (shared by every watch of that
     * event), the watch's id field (encoded once per watch), etcd 3.5's {@code fragment} flag when set,
     * then the shared event frames. Nothing is encoded or copied per response.
     */
    private void sendEventResponse(EtcdWatch w, List<ByteBuffer> events, boolean fragment) {
        ByteBuffer last = events.get(events.size() - 1);
        long rev = EtcdFrames.revision(last.array(), last.arrayOffset() + last.position(), last.remaining());
        stats.watchResponses.increment();
        byte[] header = headers.field(rev);
        byte[] flag = fragment ? FRAGMENT_FIELD : NO_BYTES;
        deliver(
                reused != null
                        ? reused.refill(header, w.idField, flag, events)
                        : new WatchResponseBytes(header, w.idField, flag, List.copyOf(events)));
    }

    /** Hands one response to grpc, which copies it into a transport buffer of its size. */
    private void deliver(WatchResponseBytes response) {
        TransportBuffers.expect(response.length());
        try {
            out.onNext(response);
        } finally {
            TransportBuffers.expect(0);
        }
    }

    /** The core ended the watch with an error frame: etcd's cancel, with a compact revision when history ran out. */
    private void canceledByNode(EtcdWatch w, ByteBuffer errorFrame) {
        WatchResponse.Builder r;
        try {
            r = WatchResponse.newBuilder()
                    .mergeFrom(
                            errorFrame.array(),
                            errorFrame.arrayOffset() + errorFrame.position(),
                            errorFrame.remaining());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IllegalStateException("an error frame this node built does not parse", e);
        }
        r.setHeader(headers.at(core.status().revision())).setWatchId(w.id);
        if (w.watcher.cursor() < core.servableFromRevision()) {
            r.setCompactRevision(core.servableFromRevision() + 1);
        }
        // Forget the watcher now; pump takes the watch out of the stream after its loop.
        release(w, "ended");
        w.canceled = true;
        anyCanceled = true;
        if (core.readiness().failure() != null) {
            // The node stopped serving: the client moves to another endpoint, as from a dead etcd member.
            end(Status.UNAVAILABLE.withDescription(
                    "this node stopped serving: " + core.readiness().failure()));
            return;
        }
        send(r.build());
    }

    /**
     * True when every watch has been sent everything up to the revision the node has dispatched:
     * live with nothing queued, or not started yet (a future start revision).
     */
    private boolean allSynced() {
        for (EtcdWatch w : watches.values()) {
            Watch watcher = w.watcher;
            if (watcher != null && (!watcher.isLive() || watcher.queued() > 0)) {
                return false;
            }
        }
        return true;
    }

    private void send(WatchResponse response) {
        if (closed) {
            return;
        }
        stats.watchResponses.increment();
        deliver(new WatchResponseBytes(response.toByteArray()));
    }

    private void end(Status status) {
        if (closed) {
            return;
        }
        closeAll();
        try {
            out.onError(status.asRuntimeException());
        } catch (IllegalStateException e) {
            LOG.debug("stream already ended: {}", e.toString());
        }
    }

    private void closeAll() {
        if (closed) {
            return;
        }
        closed = true;
        for (EtcdWatch w : watches.values()) {
            release(w, "stream-ended");
        }
        watches.clear();
        stats.watchStreams.decrement();
    }
}

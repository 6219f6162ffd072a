package io.watchfanout.fanout.frontend;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.etcd.EtcdApiSettings;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.LimitExceededException;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.FrontEndNode;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.OlderHistory;
import io.watchfanout.fanout.watch.Opening;
import io.watchfanout.fanout.watch.TooManyReadsException;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The watch contract every front end keeps, run against the in-process front end, the HTTP API and
 * the etcd API over one core: live events in order, catch-up from the history window, 410 before
 * it, a future start revision waited for (and, where the protocol has a deadline, timed out),
 * readiness refusal, bookmarks (etcd: progress notifications), where the protocol has them
 * initial events closed by their bookmark, a slow client's watcher parked and brought back with
 * nothing lost or repeated, and the limits (watchers on the node, reads of older history)
 * answered 429. Each front end maps the core's outcomes to its own wire
 * form; the test maps them back to one vocabulary ({@link Seen}).
 */
class FrontEndContractTest {
    private static final Duration WAIT = Duration.ofMillis(300);

    private final EtcdLog etcd = new EtcdLog(100);
    private WatchCore core;
    private FrontEndNode node;
    private AccessControl access;

    static Stream<String> frontEnds() {
        return Stream.of("in-process", "http", "etcd");
    }

    /** What a client saw: an event or bookmark, or the stream's refusal or end with an HTTP-style code. */
    record Seen(String type, String key, long revision, int code) {
        static Seen event(String type, String key, long revision) {
            return new Seen(type, key, revision, 0);
        }

        static Seen refusal(int code) {
            return new Seen("REFUSED", "", 0, code);
        }
    }

    /** One watch of one front end and what it saw. */
    interface Client extends AutoCloseable {
        List<Seen> seen();

        /** Stops reading (a slow client): its transport soon cannot write. */
        void pause();

        /** Reads again. */
        void resume();

        @Override
        void close() throws java.io.IOException;
    }

    private void start(boolean ready) throws Exception {
        start(ready, 5, 64, WatchLimits.NONE);
    }

    /**
     * @param windowEvents the history window's events
     * @param queueFrames each watcher's live queue
     * @param limits the node's watch limits, for every front end
     */
    private void start(boolean ready, int windowEvents, int queueFrames, WatchLimits limits) throws Exception {
        access = AccessControl.open("contract", limits);
        node = new FrontEndNode(
                CoreSettings.of(windowEvents, Duration.ofMinutes(10), queueFrames, "contract")
                        .withBookmarkInterval(Duration.ofHours(1)),
                ready,
                false,
                access,
                new EtcdApiSettings("127.0.0.1", 0, "contract", Duration.ofMillis(1), WAIT),
                FrontEndNode.httpSettings(WAIT, "contract", Duration.ofMinutes(10)),
                false);
        core = node.core;
    }

    @AfterEach
    void stop() throws Exception {
        if (node != null) {
            node.close();
        }
    }

    private void put(String k, String v) {
        node.feed.accept(etcd.put(k, v));
    }

    private Client watch(String frontEnd, long from, boolean bookmarks, boolean initial) throws Exception {
        Client c = switch (frontEnd) {
            case "in-process" -> new InProcess(from, bookmarks, initial);
            case "http" -> new Http(from, bookmarks, initial);
            default -> new Etcd(from, bookmarks);
        };
        node.keep(c);
        return c;
    }

    private static List<Seen> events(Client c) {
        return c.seen().stream().filter(s -> !s.type().equals("BOOKMARK")).toList();
    }

    // ---- the contract ------------------------------------------------------------------

    @ParameterizedTest
    @MethodSource("frontEnds")
    void liveEventsArriveInRevisionOrder(String frontEnd) throws Exception {
        start(true);
        Client c = watch(frontEnd, 0, false, false);
        awaitOpen(frontEnd, c);
        put("/c/a", "1");
        put("/c/b", "1");
        put("/c/a", "2");
        node.feed.accept(etcd.delete("/c/b"));
        await().until(() -> events(c).size() == 4);
        assertThat(events(c))
                .containsExactly(
                        Seen.event("ADDED", "/c/a", 101),
                        Seen.event("ADDED", "/c/b", 102),
                        Seen.event("MODIFIED", "/c/a", 103),
                        Seen.event("DELETED", "/c/b", 104));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aResumeCatchesUpFromTheWindowThenGoesLive(String frontEnd) throws Exception {
        start(true);
        put("/c/a", "1");
        put("/c/b", "1");
        put("/c/c", "1");
        Client c = watch(frontEnd, 101, false, false);
        await().until(() -> events(c).size() == 2);
        put("/c/d", "1");
        await().until(() -> events(c).size() == 3);
        assertThat(events(c))
                .containsExactly(
                        Seen.event("ADDED", "/c/b", 102),
                        Seen.event("ADDED", "/c/c", 103),
                        Seen.event("ADDED", "/c/d", 104));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aResumeFromBeforeTheHistoryIsExpired(String frontEnd) throws Exception {
        start(true);
        for (int i = 0; i < 12; i++) {
            put("/c/a", "v" + i);
        }
        Client c = watch(frontEnd, 101, false, false);
        await().until(() -> !c.seen().isEmpty());
        assertThat(c.seen()).last().isEqualTo(Seen.refusal(410));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aNodeThatIsNotReadyRefuses(String frontEnd) throws Exception {
        start(false);
        Client c = watch(frontEnd, 0, false, false);
        await().until(() -> !c.seen().isEmpty());
        assertThat(c.seen()).containsExactly(Seen.refusal(503));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aFutureStartRevisionIsWaitedFor(String frontEnd) throws Exception {
        start(true);
        Client c = watch(frontEnd, 101, false, false);
        put("/c/a", "1");
        put("/c/b", "1");
        await().until(() -> events(c).size() == 1);
        assertThat(events(c)).containsExactly(Seen.event("ADDED", "/c/b", 102));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aFutureStartRevisionNotReachedInTimeIsTimedOut(String frontEnd) throws Exception {
        start(true);
        Client c = watch(frontEnd, 150, false, false);
        if (frontEnd.equals("etcd")) {
            // etcd's watch waits for a future revision as long as its stream lives: no deadline.
            Thread.sleep(3 * WAIT.toMillis());
            assertThat(c.seen()).isEmpty();
            return;
        }
        await().until(() -> !c.seen().isEmpty());
        assertThat(c.seen()).containsExactly(Seen.refusal(504));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void bookmarksCarryTheRevisionReached(String frontEnd) throws Exception {
        start(true);
        Client c = watch(frontEnd, 0, true, false);
        awaitOpen(frontEnd, c);
        put("/c/a", "1");
        put("/other/b", "1");
        await().until(() -> events(c).size() == 1);
        await().until(() -> {
            // Twice: etcd sends progress only to a watch that was sent nothing since the last round.
            core.tickNow();
            return c.seen().contains(Seen.event("BOOKMARK", "", 102));
        });
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void initialEventsEndWithTheirBookmark(String frontEnd) throws Exception {
        if (frontEnd.equals("etcd")) {
            return; // etcd's API has no initial events: a client lists, then watches
        }
        start(true);
        put("/c/a", "1");
        put("/c/b", "1");
        Client c = watch(frontEnd, 0, true, true);
        await().until(() -> c.seen().size() >= 3);
        assertThat(c.seen().subList(0, 3))
                .containsExactly(
                        Seen.event("ADDED", "/c/a", 101),
                        Seen.event("ADDED", "/c/b", 102),
                        Seen.event("BOOKMARK", "", 102));
        put("/c/c", "1");
        await().until(() -> events(c).size() == 3);
        assertThat(events(c)).last().isEqualTo(Seen.event("ADDED", "/c/c", 103));
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aSlowClientsWatcherIsParkedThenReturnsWithNothingLostOrRepeated(String frontEnd) throws Exception {
        start(true, 2000, 4, WatchLimits.NONE);
        Client c = watch(frontEnd, 0, false, false);
        awaitOpen(frontEnd, c);
        c.pause();
        // Until its transport stops taking frames and its queue of 4 overflows: 5 events in
        // process, some 20 over HTTP (the sockets' buffers) and 7 over gRPC (the stream's
        // flow-control window) here.
        String value = "v".repeat(32 * 1024);
        int fed = 0;
        while (core.stats().parked() == 0) {
            assertThat(fed).as("parked within 1,000 events of 32 KiB").isLessThan(1000);
            put("/c/" + fed, value);
            fed++;
        }
        for (int i = 0; i < 5; i++) {
            put("/c/" + fed, value);
            fed++;
        }
        int total = fed;
        c.resume();
        await().atMost(Duration.ofMinutes(1)).until(() -> events(c).size() >= total);
        assertThat(events(c))
                .extracting(Seen::revision)
                .as("in order, once each")
                .isEqualTo(revisions(101, total));
        await().until(() -> core.status().liveWatcherCount() == 1);
        assertThat(core.stats().unparked())
                .as("back in live dispatch")
                .isEqualTo(core.stats().parked());
        put("/c/after", "1");
        await().until(() -> events(c).size() == total + 1);
        assertThat(events(c)).last().isEqualTo(Seen.event("ADDED", "/c/after", 101L + total));
    }

    private static List<Long> revisions(long first, int count) {
        List<Long> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(first + i);
        }
        return out;
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aWatchBeyondTheNodesWatcherLimitIsRefusedWith429(String frontEnd) throws Exception {
        start(true, 5, 64, new WatchLimits(1, 0, 0, 0));
        Client first = watch(frontEnd, 0, false, false);
        awaitOpen(frontEnd, first);
        Client second = watch(frontEnd, 0, false, false);
        await().until(() -> !second.seen().isEmpty());
        assertThat(second.seen()).containsExactly(Seen.refusal(429));
        put("/c/a", "1");
        await().until(() -> events(first).size() == 1);
        assertThat(core.status().watcherCount())
                .as("the refused one holds nothing")
                .isEqualTo(1);
    }

    @ParameterizedTest
    @MethodSource("frontEnds")
    void aResumeNeedingAReadOfOlderHistoryTheNodeCannotStartIsRefusedWith429(String frontEnd) throws Exception {
        start(true);
        core.useOlderHistory(new BusyOlderHistory());
        for (int i = 0; i < 12; i++) {
            put("/c/a", "v" + i);
        }
        Client c = watch(frontEnd, 101, false, false);
        await().until(() -> !c.seen().isEmpty());
        assertThat(c.seen()).containsExactly(Seen.refusal(429));
        assertThat(core.status().watcherCount()).isZero();
    }

    /** Older history that holds everything and can start no read now (every reader busy). */
    private static final class BusyOlderHistory implements OlderHistory {
        @Override
        public long floorRevision() {
            return 0;
        }

        @Override
        public boolean canOpen(long afterRevision) {
            return false;
        }

        @Override
        public Cursor open(long afterRevision) throws TooManyReadsException {
            throw new TooManyReadsException("every reader of older history is busy");
        }

        @Override
        public CompletableFuture<Long> revisionAt(Instant time) {
            return CompletableFuture.completedFuture(-1L);
        }
    }

    /** A watch from now is open once the core counts it (HTTP and gRPC answer asynchronously). */
    private void awaitOpen(String frontEnd, Client c) {
        await().until(() -> core.status().liveWatcherCount() == 1);
    }

    // ---- the clients -------------------------------------------------------------------

    private static Seen fromWatchEvent(WatchEvent e) {
        if (e.getType() == WatchEvent.Type.ERROR) {
            return Seen.refusal(e.getStatus().getCode());
        }
        String key = e.getType() == WatchEvent.Type.BOOKMARK
                ? ""
                : e.getObject().getKey().toStringUtf8();
        return Seen.event(e.getType().name(), key, e.getResourceVersion());
    }

    /** What every client keeps: what it saw, and whether it reads. */
    private abstract static class Recording implements Client {
        final List<Seen> seen = new CopyOnWriteArrayList<>();
        /** One permit while the client reads; {@link #pause} takes it. */
        private final Semaphore reading = new Semaphore(1);

        @Override
        public List<Seen> seen() {
            return seen;
        }

        @Override
        public void pause() {
            reading.acquireUninterruptibly();
        }

        @Override
        public void resume() {
            reading.release();
            resumed();
        }

        /** After {@link #resume}: a client that reads on demand asks for more. */
        void resumed() {}

        boolean paused() {
            return reading.availablePermits() == 0;
        }

        /** Blocks the reading thread while paused. */
        void awaitReading() throws InterruptedException {
            reading.acquire();
            reading.release();
        }
    }

    /** The core's one entry, polled on a thread of its own as a transport would. */
    private final class InProcess extends Recording {
        volatile Watch watch;
        volatile boolean closed;
        volatile WatchGrant grant;

        InProcess(long from, boolean bookmarks, boolean initial) {
            WatchSpec spec = WatchSpec.of(KeyRange.prefix(key("/c/")), WatchEventEncodings.JSON)
                    .from(from)
                    .bookmarks(bookmarks)
                    .initialEvents(initial)
                    .build();
            try {
                // Admission before opening, as every front end does.
                grant = access.admitWatch(Identity.ANONYMOUS, spec.range(), "in-process");
            } catch (LimitExceededException e) {
                seen.add(Seen.refusal(429));
                return;
            } catch (AccessDeniedException e) {
                seen.add(Seen.refusal(403));
                return;
            }
            core.open(spec, () -> {}, WAIT, Runnable::run, (Opening o) -> {
                if (o.opened()) {
                    watch = o.watch();
                } else {
                    grant.end("refused", 0);
                    seen.add(Seen.refusal(o.status().getCode()));
                }
            });
            Thread t = new Thread(this::pump, "contract-in-process");
            t.setDaemon(true);
            t.start();
        }

        private void pump() {
            List<ByteBuffer> out = new ArrayList<>();
            while (!closed) {
                Watch w = watch;
                if (w != null && !paused()) {
                    out.clear();
                    Watch.PollResult r = w.poll(out, 64);
                    for (ByteBuffer f : out) {
                        seen.add(fromWatchEvent(Frames.decode(f, true)));
                    }
                    if (r == Watch.PollResult.END) {
                        return;
                    }
                }
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        @Override
        public void close() {
            closed = true;
            if (watch != null) {
                watch.close();
            }
            if (grant != null) {
                grant.end("closed", 0);
            }
        }
    }

    /** {@code GET /v1/watch}, JSON lines. */
    private final class Http extends Recording {
        volatile InputStream body;

        Http(long from, boolean bookmarks, boolean initial) {
            URI uri =
                    URI.create("http://127.0.0.1:" + node.http.port() + "/v1/watch?key=/c/&prefix=true&resourceVersion="
                            + from + (bookmarks ? "&allowWatchBookmarks=true" : "")
                            + (initial ? "&sendInitialEvents=true" : ""));
            HttpClient client = HttpClient.newHttpClient();
            Thread t = new Thread(
                    () -> {
                        try {
                            HttpResponse<InputStream> r = client.send(
                                    HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofInputStream());
                            body = r.body();
                            if (r.statusCode() != 200) {
                                seen.add(Seen.refusal(r.statusCode()));
                                return;
                            }
                            BufferedReader in =
                                    new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
                            String line;
                            while ((line = in.readLine()) != null) {
                                awaitReading();
                                if (!line.isBlank()) {
                                    seen.add(fromWatchEvent(Frames.parseJsonLine(line)));
                                }
                            }
                        } catch (Exception e) {
                            // closed by the test
                        }
                    },
                    "contract-http");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws java.io.IOException {
            if (body != null) {
                body.close();
            }
        }
    }

    /**
     * etcd's {@code Watch} over gRPC: one create request; progress notifications are bookmarks.
     * Reads one response at a time (grpc's inbound flow control), so that a paused client stops
     * taking them.
     */
    private final class Etcd extends Recording implements ClientResponseObserver<WatchRequest, WatchResponse> {
        final StreamObserver<WatchRequest> requests;
        volatile ClientCallStreamObserver<WatchRequest> call;

        Etcd(long from, boolean bookmarks) {
            requests = WatchGrpc.newStub(node.channel).watch(this);
            ByteString prefix = ByteString.copyFromUtf8("/c/");
            requests.onNext(WatchRequest.newBuilder()
                    .setCreateRequest(WatchCreateRequest.newBuilder()
                            .setKey(prefix)
                            .setRangeEnd(KeyRange.prefixEnd(prefix))
                            // etcd's start revision is the first revision wanted; ours the last one had.
                            .setStartRevision(from == 0 ? 0 : from + 1)
                            .setProgressNotify(bookmarks))
                    .build());
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
            call = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
        }

        @Override
        public void onNext(WatchResponse r) {
            take(r);
            if (!paused()) {
                call.request(1);
            }
        }

        private void take(WatchResponse r) {
            if (r.getCanceled()) {
                // etcd says why only in the reason: a compaction, or one of the node's limits.
                String why = r.getCancelReason();
                seen.add(Seen.refusal(
                        r.getCompactRevision() > 0
                                ? 410
                                : why.contains("too many") || why.contains("older history") ? 429 : 500));
                return;
            }
            if (r.getCreated()) {
                return;
            }
            if (r.getEventsCount() == 0) {
                seen.add(Seen.event("BOOKMARK", "", r.getHeader().getRevision()));
                return;
            }
            for (io.etcd.jetcd.api.Event e : r.getEventsList()) {
                String type = e.getType() == io.etcd.jetcd.api.Event.EventType.DELETE
                        ? "DELETED"
                        : e.getKv().getVersion() == 1 ? "ADDED" : "MODIFIED";
                long rev = e.getType() == io.etcd.jetcd.api.Event.EventType.DELETE
                        ? e.getKv().getModRevision()
                        : e.getKv().getModRevision();
                seen.add(Seen.event(type, e.getKv().getKey().toStringUtf8(), rev));
            }
        }

        @Override
        public void onError(Throwable t) {
            Status s = Status.fromThrowable(t);
            seen.add(Seen.refusal(s.getCode() == Status.Code.UNAVAILABLE ? 503 : 500));
        }

        @Override
        public void onCompleted() {}

        @Override
        void resumed() {
            call.request(1);
        }

        @Override
        public void close() {
            requests.onCompleted();
        }
    }
}

package io.watchfanout.fanout.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnknownFieldSet;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.WatchLimits;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The etcd API's Watch over a core fed by the test (no Kafka): a client that stops taking
 * responses has its watcher parked by the core and caught up from history, as a slow HTTP
 * stream; a parked watch that falls behind the history is canceled with a compact revision;
 * a fragmenting watch gets a large revision in fragments.
 */
class EtcdApiStreamTest {
    private static final String VALUE = "x".repeat(1024);
    private EtcdLog etcd = new EtcdLog(100);
    private WatchCore core;
    private RecordFeed applier;
    private EtcdApi api;
    private ManagedChannel channel;
    private CollectorRegistry registry;

    private void start(int historyMaxEvents) {
        start(historyMaxEvents, Duration.ofMinutes(10));
    }

    private void start(int historyMaxEvents, Duration progressNotifyInterval) {
        start(historyMaxEvents, progressNotifyInterval, 100);
    }

    private void start(int historyMaxEvents, Duration progressNotifyInterval, long revision) {
        start(historyMaxEvents, progressNotifyInterval, revision, 16);
    }

    private void start(int historyMaxEvents, Duration progressNotifyInterval, long revision, int queueFrames) {
        etcd = new EtcdLog(revision);
        core = new WatchCore(
                CoreSettings.of(historyMaxEvents, Duration.ofMinutes(10), queueFrames, "etcd-api-test"),
                new FrameEncoder());
        core.start();
        core.feed().startAt(revision);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), revision);
        api = EtcdApis.create(
                core,
                "127.0.0.1",
                0,
                "etcd-api-test",
                null,
                EtcdCredentials.none(),
                progressNotifyInterval,
                Duration.ofSeconds(1),
                registry = new CollectorRegistry(),
                AccessControl.open("etcd-api-test", WatchLimits.NONE));
        api.start();
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", api.port())
                .usePlaintext()
                .maxInboundMessageSize(16 * 1024 * 1024)
                .build();
    }

    @BeforeEach
    void noNodeYet() {
        core = null;
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        api.stop(1000);
        core.close();
    }

    @Test
    void aClientThatStopsReadingIsParkedAndCaughtUpFromHistory() throws Exception {
        start(100_000);
        Client client = parkedWatch();
        assertThat(core.status().liveWatcherCount()).isZero();
        client.request(Integer.MAX_VALUE);
        await().atMost(Duration.ofSeconds(60)).until(() -> client.events().size() == 5000);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> core.stats().unparked() >= 1 && core.status().liveWatcherCount() == 1);
        List<Event> events = client.events();
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).getKv().getModRevision()).isEqualTo(101 + i);
            assertThat(events.get(i).getKv().getValue().toStringUtf8()).isEqualTo(VALUE + i);
        }
        // Live again: the next event comes at once.
        etcd.put("/a/live", "v").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10)).until(() -> client.events().size() == 5001);
        assertThat(core.frameEncoder().encodes(EtcdEncodings.ETCD, FrameKind.EVENT))
                .isEqualTo(5001);
    }

    @Test
    void aClientThatVanishesWhileResponsesWaitLeavesNoTransportBufferInUse() throws Exception {
        start(100_000);
        parkedWatch();
        // Responses wait in grpc's transport, each in a buffer of the pool, for a client that takes none.
        assertThat(TransportBuffers.inUseBytes()).isPositive();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        // The stream ends with its client, and its watch with it.
        await().atMost(Duration.ofSeconds(10)).until(() -> core.status().watcherCount() == 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> TransportBuffers.inUseBytes() == 0);
    }

    @Test
    void aParkedWatchThatFallsBehindTheHistoryIsCanceledWithACompactRevision() throws Exception {
        start(200);
        Client client = parkedWatch();
        client.request(Integer.MAX_VALUE);
        WatchResponse canceled = await().atMost(Duration.ofSeconds(60))
                .until(
                        () -> client.received.stream()
                                .filter(WatchResponse::getCanceled)
                                .findFirst()
                                .orElse(null),
                        r -> r != null);
        // The oldest start revision the node could serve when it canceled the watch.
        assertThat(canceled.getCompactRevision())
                .isGreaterThan(101)
                .isLessThanOrEqualTo(core.status().historyStartRevision() + 1);
        assertThat(canceled.getCancelReason()).contains("too old resource version");
        List<Event> events = client.events();
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).getKv().getModRevision()).isEqualTo(101 + i);
        }
        // What it got is everything before a point it can no longer resume from on this node.
        assertThat(101L + events.size()).isLessThan(canceled.getCompactRevision());
        assertThat(core.stats().endedExpired()).isEqualTo(1);
    }

    @Test
    void aLargeRevisionGoesOutInFragmentsWhenTheWatchAsksForThem() throws Exception {
        start(1000);
        Client client = new Client(channel);
        client.request(Integer.MAX_VALUE);
        WatchCreateRequest fragmenting = create("/f/", 0, true);
        client.send(fragmenting);
        client.send(withId(create("/f/", 0, false), 7));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> client.received.size() == 2 && core.status().liveWatcherCount() == 2);
        String big = "b".repeat(700 * 1024);
        etcd.txn(EtcdLog.Op.put("/f/1", big), EtcdLog.Op.put("/f/2", big), EtcdLog.Op.put("/f/3", big))
                .forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> client.received.stream()
                                .mapToInt(WatchResponse::getEventsCount)
                                .sum()
                        == 6);
        List<WatchResponse> ofFirst = client.received.stream()
                .filter(r -> r.getWatchId() == 0 && !r.getCreated())
                .toList();
        assertThat(ofFirst).hasSizeGreaterThan(1);
        for (int i = 0; i < ofFirst.size(); i++) {
            boolean fragment = !ofFirst.get(i)
                    .getUnknownFields()
                    .getField(7)
                    .getVarintList()
                    .isEmpty();
            assertThat(fragment).as("response %d", i).isEqualTo(i < ofFirst.size() - 1);
        }
        // The other watch (client-chosen id 7) gets the revision in one response.
        assertThat(client.received.stream()
                        .filter(r -> r.getWatchId() == 7 && !r.getCreated())
                        .toList())
                .hasSize(1);
    }

    @Test
    void aStreamOverTheNetworkIsServedOnItsConnectionsEventLoop() throws Exception {
        start(1000);
        Client client = new Client(channel);
        client.request(Integer.MAX_VALUE);
        client.send(create("/l/", 0, false));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> client.received.size() == 1 && core.status().liveWatcherCount() == 1);
        etcd.put("/l/a", "1").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10)).until(() -> client.events().size() == 1);
        assertThat(api.lanes().streamsOnLoops()).isEqualTo(1);
        assertThat(api.lanes().streamsOnOwnLanes()).isZero();
        // The responses went through the node's pool of transport buffers, the one its metrics show.
        assertThat(TransportBuffers.allocatedBytes()).isPositive();
    }

    @Test
    void aClientThatSendsRequestsWithoutReadingTheAnswersIsHeldBack() throws Exception {
        start(1000);
        Client client = new Client(channel);
        int pairs = 100_000;
        for (int i = 1; i <= pairs; i++) {
            client.send(withId(create("/p/", 0, false), i));
            client.cancel(i);
        }
        // The client took one answer: the node answers what the transport's windows hold, then stops
        // reading requests (etcd's receive loop blocks the same way) instead of queuing the rest.
        // The bounds only end a hung test: on a box loaded by other work, 200,000 answers take minutes.
        long[] last = {-1};
        await().atMost(Duration.ofMinutes(5))
                .pollInterval(Duration.ofSeconds(2))
                .until(() -> {
                    long now = responsesSent();
                    boolean settled = now == last[0];
                    last[0] = now;
                    return settled && now > 0;
                });
        assertThat(responsesSent()).isLessThan(2L * pairs);
        client.request(Integer.MAX_VALUE);
        await().atMost(Duration.ofMinutes(10)).until(() -> client.received.size() == 2 * pairs);
        for (int i = 0; i < 2 * pairs; i++) {
            WatchResponse r = client.received.get(i);
            assertThat(r.getWatchId()).isEqualTo(i / 2 + 1);
            assertThat(r.getCanceled()).isEqualTo(i % 2 == 1);
        }
    }

    private long responsesSent() {
        return registry.getSampleValue("watchfanout_etcd_api_watch_responses_total")
                .longValue();
    }

    @Test
    void aCatchingUpWatchGetsBoundedResponsesOfWholeRevisions() throws Exception {
        Client client = clientAfterHundredTransactions();
        // A watch from the first of them.
        client.send(create("/t/", 101, false));
        await().atMost(Duration.ofSeconds(10)).until(() -> client.events().size() == 300);
        List<WatchResponse> withEvents =
                client.received.stream().filter(r -> r.getEventsCount() > 0).toList();
        // 300 events in responses of at most 16 + 2 (the bound, then the rest of a revision).
        assertThat(EtcdWatchStream.MAX_FRAMES_PER_RESPONSE).isEqualTo(16);
        assertThat(withEvents).hasSizeGreaterThanOrEqualTo(17);
        long lastRevision = 100;
        for (WatchResponse r : withEvents) {
            // At most the bound, then to the end of the last revision; never a revision split in two.
            assertThat(r.getEventsCount()).isLessThanOrEqualTo(18);
            assertThat(r.getEventsCount() % 3).isZero();
            assertThat(r.getEvents(0).getKv().getModRevision()).isEqualTo(lastRevision + 1);
            lastRevision = r.getEvents(r.getEventsCount() - 1).getKv().getModRevision();
            // The header speaks of the response's last revision, with the node's member id.
            assertThat(r.getHeader().getRevision()).isEqualTo(lastRevision);
            assertThat(r.getHeader().getMemberId()).isNotZero();
        }
        assertThat(lastRevision).isEqualTo(200);
    }

    @Test
    void eachWatchOfAStreamGetsItsEventsWhileTheFirstCatchesUpAndAfterItIsCanceled() throws Exception {
        Client client = clientAfterHundredTransactions();
        // The stream's first watch (flagged when woken, in no queue) catches up while a second one is live.
        client.send(withId(create("/t/", 101, false), 1));
        client.send(withId(create("/u/", 0, false), 2));
        await().atMost(Duration.ofSeconds(10)).until(() -> created(client, 2));
        etcd.put("/u/x", "1").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        client.eventsOf(1).size() == 300 && client.eventsOf(2).size() == 1);

        // Without its first watch, the stream's others are queued.
        client.cancel(1);
        client.send(withId(create("/t/", 0, false), 3));
        await().atMost(Duration.ofSeconds(10)).until(() -> created(client, 3));
        etcd.put("/t/d", "2").forEach(applier::accept);
        etcd.put("/u/y", "3").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10))
                .until(() ->
                        client.eventsOf(3).size() == 1 && client.eventsOf(2).size() == 2);

        // A watch made when the stream has no other is its first again.
        client.cancel(2);
        client.cancel(3);
        client.send(withId(create("/u/", 0, false), 4));
        await().atMost(Duration.ofSeconds(10)).until(() -> created(client, 4));
        etcd.put("/u/z", "4").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10)).until(() -> client.eventsOf(4).size() == 1);
        assertThat(client.eventsOf(1)).hasSize(300);
        assertThat(client.eventsOf(2)).hasSize(2);
        assertThat(client.eventsOf(3)).hasSize(1);
        assertThat(client.eventsOf(4).get(0).getKv().getKey().toStringUtf8()).isEqualTo("/u/z");
    }

    /**
     * A node whose watcher queues take 1,024 frames (a catch-up step hands over more than a response
     * takes), 100 revisions of 3 events each under /t/ (etcd transactions) from revision 101, and a
     * client that takes every response.
     */
    private Client clientAfterHundredTransactions() {
        start(1000, Duration.ofMinutes(10), 100, 1024);
        for (int i = 0; i < 100; i++) {
            etcd.txn(EtcdLog.Op.put("/t/a", "a" + i), EtcdLog.Op.put("/t/b", "b" + i), EtcdLog.Op.put("/t/c", "c" + i))
                    .forEach(applier::accept);
        }
        Client client = new Client(channel);
        client.request(Integer.MAX_VALUE);
        return client;
    }

    private static boolean created(Client client, long id) {
        return client.received.stream().anyMatch(r -> r.getCreated() && r.getWatchId() == id);
    }

    @Test
    void withoutEtcdEndpointsForwardedCallsAndLinearizableReadsAnswerUnavailableNamingTheFlag() {
        start(1000);
        etcd.put("/u/a", "1").forEach(applier::accept);
        io.etcd.jetcd.api.KVGrpc.KVBlockingStub kv = io.etcd.jetcd.api.KVGrpc.newBlockingStub(channel);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> kv.put(io.etcd.jetcd.api.PutRequest.newBuilder()
                        .setKey(ByteString.copyFromUtf8("/u/b"))
                        .build()))
                .hasMessageContaining("UNAVAILABLE")
                .hasMessageContaining("--etcd-endpoints");
        io.etcd.jetcd.api.RangeRequest read = io.etcd.jetcd.api.RangeRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8("/u/a"))
                .build();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> kv.range(read))
                .hasMessageContaining("UNAVAILABLE")
                .hasMessageContaining("--etcd-endpoints");
        // A serializable read needs no etcd: the node's revision.
        io.etcd.jetcd.api.RangeResponse r =
                kv.range(read.toBuilder().setSerializable(true).build());
        assertThat(r.getKvs(0).getValue().toStringUtf8()).isEqualTo("1");
        assertThat(r.getHeader().getRevision()).isEqualTo(core.status().revision());
    }

    @Test
    void aWatchFromRevisionOneOfAFreshEtcdGetsEverything() throws Exception {
        // etcd's store starts at revision 1 with no event; the node's history starts there too.
        start(1000, Duration.ofMinutes(10), 1);
        etcd.put("/r/a", "1").forEach(applier::accept);
        etcd.put("/r/b", "2").forEach(applier::accept);
        Client client = new Client(channel);
        client.request(Integer.MAX_VALUE);
        client.send(create("/r/", 1, false));
        await().atMost(Duration.ofSeconds(10)).until(() -> client.events().size() == 2);
        assertThat(client.received.stream().noneMatch(WatchResponse::getCanceled))
                .isTrue();
        assertThat(client.events().get(0).getKv().getModRevision()).isEqualTo(2);
    }

    @Test
    void malformedCreateRequestsGetEtcdsAnswers() throws Exception {
        start(1000);
        Client client = new Client(channel);
        client.request(Integer.MAX_VALUE);
        // A range end that sorts before the key: etcd's mvcc refuses it before it picks an id.
        client.send(WatchCreateRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8("/z"))
                .setRangeEnd(ByteString.copyFromUtf8("/a"))
                .build());
        client.send(create("/m/", 0, false));
        await().atMost(Duration.ofSeconds(10)).until(() -> client.received.size() == 2);
        assertThat(client.received.get(0).getWatchId()).isEqualTo(-1);
        assertThat(client.received.get(0).getCreated()).isTrue();
        assertThat(client.received.get(0).getCanceled()).isTrue();
        assertThat(client.received.get(0).getCancelReason()).isEqualTo("mvcc: watcher range is empty");
        assertThat(client.received.get(1).getWatchId()).isZero();
        assertThat(client.received.get(1).getCanceled()).isFalse();

        // The id of a live watch again: refused with id -1, the live watch untouched.
        client.send(withId(create("/m/", 0, false), 5));
        client.send(withId(create("/m/", 0, false), 5));
        await().atMost(Duration.ofSeconds(10)).until(() -> client.received.size() == 4);
        assertThat(client.received.get(2).getWatchId()).isEqualTo(5);
        assertThat(client.received.get(3).getWatchId()).isEqualTo(-1);
        assertThat(client.received.get(3).getCanceled()).isTrue();
        assertThat(client.received.get(3).getCancelReason())
                .isEqualTo("mvcc: duplicate watch ID provided on the WatchStream");

        // A negative start revision: created, then canceled as compacted, as etcd's unsynced watcher is.
        client.send(create("/m/", -5, false));
        await().atMost(Duration.ofSeconds(10)).until(() -> client.received.size() == 6);
        assertThat(client.received.get(4).getWatchId()).isEqualTo(1);
        assertThat(client.received.get(4).getCreated()).isTrue();
        assertThat(client.received.get(5).getWatchId()).isEqualTo(1);
        assertThat(client.received.get(5).getCanceled()).isTrue();
        assertThat(client.received.get(5).getCompactRevision()).isPositive();

        // The watches that were created serve events.
        etcd.put("/m/a", "1").forEach(applier::accept);
        await().atMost(Duration.ofSeconds(10)).until(() -> client.events().size() == 1);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> client.received.stream().anyMatch(r -> r.getWatchId() == 5 && r.getEventsCount() == 1));
        assertThat(core.status().liveWatcherCount()).isEqualTo(2);
    }

    @Test
    void aQuietWatchWithProgressNotifyGetsEmptyResponsesAtTheRevision() throws Exception {
        start(1000, Duration.ofMillis(200));
        Client client = new Client(channel);
        client.request(Integer.MAX_VALUE);
        client.send(create("/p/", 0, false).toBuilder().setProgressNotify(true).build());
        client.send(withId(create("/p/", 0, false), 9));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> client.received.size() == 2 && core.status().liveWatcherCount() == 2);
        etcd.put("/other/key", "v").forEach(applier::accept);
        long revision = core.status().revision();
        // Writes elsewhere move the revision; the quiet watch learns it from progress notifications.
        WatchResponse progress = await().atMost(Duration.ofSeconds(10))
                .until(
                        () -> client.received.stream()
                                .filter(r -> r.getWatchId() == 0
                                        && !r.getCreated()
                                        && r.getEventsCount() == 0
                                        && r.getHeader().getRevision() >= revision)
                                .findFirst()
                                .orElse(null),
                        r -> r != null);
        assertThat(progress.getCanceled()).isFalse();
        // A watch without progress_notify gets none.
        for (int i = 0; i < 10; i++) {
            etcd.put("/p/k", "v" + i).forEach(applier::accept);
            Thread.sleep(50);
        }
        Thread.sleep(500);
        assertThat(client.received.stream()
                        .filter(r -> r.getWatchId() == 9 && r.getEventsCount() == 0 && !r.getCreated()))
                .isEmpty();
    }

    /**
     * A watch of /a/ from revision 101 whose client takes only the created response, then 5,000 puts
     * of 1 KiB: grpc's window fills, the node stops polling the watcher, and the core parks it.
     */
    private Client parkedWatch() {
        Client client = new Client(channel);
        client.send(create("/a/", 101, false));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> client.received.size() == 1 && core.status().liveWatcherCount() == 1);
        for (int i = 0; i < 5000; i++) {
            etcd.put("/a/" + (i % 50), VALUE + i).forEach(applier::accept);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> core.stats().parked() >= 1);
        return client;
    }

    /** {@code c} with etcd 3.5's {@code watch_id} (a field jetcd's API classes lack). */
    private static WatchCreateRequest withId(WatchCreateRequest c, long id) {
        return c.toBuilder()
                .setUnknownFields(UnknownFieldSet.newBuilder()
                        .addField(
                                7,
                                UnknownFieldSet.Field.newBuilder().addVarint(id).build())
                        .build())
                .build();
    }

    private static WatchCreateRequest create(String prefix, long start, boolean fragment) {
        WatchCreateRequest.Builder b = WatchCreateRequest.newBuilder()
                .setKey(ByteString.copyFromUtf8(prefix))
                .setRangeEnd(ByteString.copyFromUtf8(prefix.substring(0, prefix.length() - 1) + "0"))
                .setStartRevision(start);
        if (fragment) {
            b.setUnknownFields(UnknownFieldSet.newBuilder()
                    .addField(8, UnknownFieldSet.Field.newBuilder().addVarint(1).build())
                    .build());
        }
        return b.build();
    }

    /** A Watch stream whose client takes responses only when asked to (grpc's manual flow control). */
    private static final class Client implements ClientResponseObserver<WatchRequest, WatchResponse> {
        final List<WatchResponse> received = new CopyOnWriteArrayList<>();
        private final io.grpc.stub.StreamObserver<WatchRequest> requests;
        private ClientCallStreamObserver<WatchRequest> call;

        Client(ManagedChannel channel) {
            requests = WatchGrpc.newStub(channel).watch(this);
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
            call = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
        }

        void request(int n) {
            call.request(n);
        }

        void send(WatchCreateRequest c) {
            requests.onNext(WatchRequest.newBuilder().setCreateRequest(c).build());
        }

        void cancel(long id) {
            requests.onNext(WatchRequest.newBuilder()
                    .setCancelRequest(
                            io.etcd.jetcd.api.WatchCancelRequest.newBuilder().setWatchId(id))
                    .build());
        }

        List<Event> events() {
            return eventsOf(0);
        }

        List<Event> eventsOf(long watchId) {
            return received.stream()
                    .filter(r -> r.getWatchId() == watchId)
                    .flatMap(r -> r.getEventsList().stream())
                    .toList();
        }

        @Override
        public void onNext(WatchResponse value) {
            received.add(value);
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
    }
}

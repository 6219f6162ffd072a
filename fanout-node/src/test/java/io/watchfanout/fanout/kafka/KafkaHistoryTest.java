package io.watchfanout.fanout.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.NodeTopics;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.TooManyReadsException;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSink;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.schema.EventsRecordSerializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.WatchEvent;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The events topic as history before the window, against a real Kafka broker: a node whose window
 * holds the last 50 events serves watches from any revision the topic holds with exactly its
 * events, then live ones; readers of one span share one read and one encode per event; a resync
 * inside the span, a revision before the topic and too many reads are refused as they must be.
 */
@ExtendWith(KafkaExtension.class)
@Timeout(180)
class KafkaHistoryTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int WINDOW = 50;

    private final List<AutoCloseable> opened = new ArrayList<>();
    private EtcdLog etcd;
    /** "revision key" of every event on /k* published, in order: what a watch of /k* must get. */
    private final List<String> published = new ArrayList<>();

    private KafkaProducer<byte[], byte[]> producer;
    private String events;

    @AfterEach
    void close() throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
    }

    /** Topics with {@code writes} single-key events (and a progress record every 10) before the node starts. */
    private String topics(KafkaBroker kafka, TestInfo info, int writes) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        events = WatchFanoutSerdes.eventsTopic(prefix);
        String state = WatchFanoutSerdes.stateTopic(prefix);
        NodeTopics.create(kafka.bootstrapServers(), prefix);
        producer = NodeTopics.producer(kafka.bootstrapServers(), prefix);
        opened.add(producer);
        etcd = new EtcdLog(0);
        // The state topic says: revision 0, events from offset 0 (the node reads every event).
        producer.beginTransaction();
        producer.send(NodeTopics.checkpoint(state, 0, 0));
        producer.commitTransaction();
        write(writes);
        return prefix;
    }

    private void write(int n) {
        // Twenty revisions per transaction (whole revisions, as the ingester may batch them): fewer
        // commits to wait for, and transaction markers between revisions all the same.
        List<EventsRecord> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            List<EventsRecord> rs = i % 7 == 3
                    ? etcd.txn(EtcdLog.Op.put("/k" + (i % 13), "t" + i), EtcdLog.Op.put("/other/" + i, "o"))
                    : i % 11 == 5 ? etcd.delete("/k" + ((i + 1) % 13)) : etcd.put("/k" + (i % 13), "v" + i);
            if (i % 10 == 9) {
                rs = new ArrayList<>(rs);
                rs.add(etcd.progress());
            }
            batch.addAll(rs);
            if (i % 20 == 19 || i == n - 1) {
                send(batch);
                batch = new ArrayList<>();
            }
        }
    }

    private void send(List<EventsRecord> records) {
        EventsRecordSerializer ser = new EventsRecordSerializer();
        producer.beginTransaction();
        for (EventsRecord r : records) {
            byte[] k = r.hasEvent() ? r.getEvent().getKv().getKey().toByteArray() : new byte[0];
            producer.send(new ProducerRecord<>(events, k, ser.serialize(events, r)));
            if (r.hasEvent()
                    && !r.getEvent().getResync()
                    && r.getEvent().getKv().getKey().toStringUtf8().startsWith("/k")) {
                published.add(r.getEvent().getRevision() + " "
                        + r.getEvent().getKv().getKey().toStringUtf8());
            }
        }
        producer.commitTransaction();
    }

    /** A node's core: core, window of {@link #WINDOW} events, older history, feed. */
    private record Node(WatchCore core, KafkaHistory history, KafkaCacheLoader loader) {}

    private Node node(KafkaBroker kafka, String prefix, int maxReads, long maxBytes, boolean indexed) {
        WatchCore core =
                new WatchCore(CoreSettings.of(WINDOW, Duration.ofMinutes(10), 64, "history-test"), new FrameEncoder());
        KafkaHistory history = new KafkaHistory(
                kafka.bootstrapServers(),
                KafkaClientSettings.NONE,
                prefix,
                "history-test",
                core.status()::historyStartRevision,
                maxReads,
                maxBytes,
                Duration.ofSeconds(30));
        core.useOlderHistory(history);
        KafkaCacheLoader loader =
                KafkaCacheLoaderTest.loader(kafka, prefix, core.feed(), new RebuildProgress(), "history-test");
        if (indexed) {
            loader.indexInto(history);
        }
        history.start();
        loader.start();
        opened.add(history);
        opened.add(loader);
        await().atMost(WAIT)
                .until(() -> core.readiness().isRebuilt()
                        && core.status().revision() == etcd.revision()
                        && history.floorRevision() != Long.MAX_VALUE);
        return new Node(core, history, loader);
    }

    /** A transport that reads whenever woken, on a thread of its own. */
    private static final class PullSink implements WatchSink {
        final List<WatchEvent> received = new ArrayList<>();
        private final Object lock = new Object();
        private boolean woken = true;
        volatile boolean ended;
        /** Polls left; a stalled reader gets a few. */
        volatile int polls = Integer.MAX_VALUE;

        Watch watcher;

        @Override
        public void wakeUp() {
            synchronized (lock) {
                woken = true;
                lock.notifyAll();
            }
        }

        void start(Watch w) {
            watcher = w;
            Thread t = new Thread(this::run, "pull-" + w.id());
            t.setDaemon(true);
            t.start();
        }

        private void run() {
            List<ByteBuffer> out = new ArrayList<>();
            while (!ended) {
                synchronized (lock) {
                    while (!woken || polls <= 0) {
                        try {
                            lock.wait(100);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    woken = false;
                }
                Watch.PollResult r;
                do {
                    out.clear();
                    polls--;
                    r = watcher.poll(out, 64);
                    synchronized (received) {
                        for (ByteBuffer f : out) {
                            received.add(Frames.decode(f, WatchEventEncodings.JSON));
                        }
                    }
                } while ((r == Watch.PollResult.FRAMES || r == Watch.PollResult.YIELD) && polls > 0);
                if (r == Watch.PollResult.END) {
                    ended = true;
                    watcher.close();
                }
            }
        }

        /** "revision key" of each event frame. */
        List<String> events() {
            List<String> out = new ArrayList<>();
            synchronized (received) {
                for (WatchEvent e : received) {
                    if (e.getType() != WatchEvent.Type.BOOKMARK && e.getType() != WatchEvent.Type.ERROR) {
                        out.add(e.getResourceVersion() + " "
                                + e.getObject().getKey().toStringUtf8());
                    }
                }
            }
            return out;
        }

        WatchEvent last() {
            synchronized (received) {
                return received.isEmpty() ? null : received.get(received.size() - 1);
            }
        }
    }

    private PullSink watch(WatchCore core, long from) throws Exception {
        PullSink sink = new PullSink();
        sink.start(core.watch(
                WatchSpec.of(KeyRange.prefix(EtcdLog.key("/k")), WatchEventEncodings.JSON)
                        .from(from)
                        .build(),
                sink));
        return sink;
    }

    /** The events with a revision after {@code from} on {@code /k*}, as published. */
    private List<String> expectedAfter(long from) {
        List<String> out = new ArrayList<>();
        for (String e : published) {
            if (Long.parseLong(e.substring(0, e.indexOf(' '))) > from) {
                out.add(e);
            }
        }
        return out;
    }

    private void awaitEvents(PullSink sink, long from) {
        try {
            await().atMost(WAIT)
                    .until(() -> sink.events().size() >= expectedAfter(from).size() || sink.ended);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // The comparison below says what is missing.
        }
        assertThat(sink.events()).as("events after " + from).containsExactlyElementsOf(expectedAfter(from));
    }

    @Test
    void watchesFromBeforeTheWindowGetExactlyTheTopicsEventsThenLiveOnes(KafkaBroker kafka, TestInfo info)
            throws Exception {
        String prefix = topics(kafka, info, 600);
        Node node = node(kafka, prefix, 4, 1 << 20, true);
        assertThat(node.core().status().historyStartRevision()).isGreaterThan(500);
        long[] froms = {
            1,
            17,
            250,
            node.core().status().historyStartRevision() - 1,
            node.core().status().historyStartRevision() + 3
        };
        List<PullSink> sinks = new ArrayList<>();
        for (long from : froms) {
            sinks.add(watch(node.core(), from));
        }
        write(40);
        for (int i = 0; i < froms.length; i++) {
            awaitEvents(sinks.get(i), froms[i]);
        }
        assertThat(node.core().stats().resumedFromOlder()).isEqualTo(froms.length - 1);
        assertThat(node.core().stats().catchUpFromOlder()).isPositive();
        assertThat(node.history().readsStarted()).isBetween(1L, (long) froms.length - 1);
    }

    @Test
    void readersOfOneSpanShareOneReadAndOneEncodePerEvent(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = topics(kafka, info, 800);
        Node node = node(kafka, prefix, 2, 8 << 20, true);
        long from = 100;
        long encodesBefore = node.core().frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT);
        List<PullSink> sinks = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            sinks.add(watch(node.core(), from));
        }
        for (PullSink s : sinks) {
            awaitEvents(s, from);
        }
        assertThat(node.history().readsStarted()).isEqualTo(1);
        long read = node.history().eventsRead();
        assertThat(read).isPositive();
        // One encode per event read from Kafka in the watched range plus one per window event.
        long inRangeSpan = expectedAfter(from).size();
        assertThat(node.core().frameEncoder().encodes(WatchEventEncodings.JSON, FrameKind.EVENT) - encodesBefore)
                .isLessThanOrEqualTo(inRangeSpan);
    }

    @Test
    void withoutTheIndexTheReadFindsItsStartBySearchingTheTopic(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = topics(kafka, info, 3000);
        Node node = node(kafka, prefix, 2, 1 << 20, false);
        for (long from : new long[] {1, 1234, 2999, node.core().status().historyStartRevision() - 2}) {
            PullSink s = watch(node.core(), from);
            awaitEvents(s, from);
            s.ended = true;
        }
    }

    @Test
    void resyncBeforeTheTopicAndLimitsAreRefused(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = topics(kafka, info, 300);
        long beforeResync = etcd.revision();
        send(etcd.resync(Map.of("/k1", "r")));
        write(120);
        Node node = node(kafka, prefix, 1, 200, true);
        // A fresh node saw the resync while it rebuilt: a watch from before it is refused up front.
        assertThat(node.history().floorRevision()).isGreaterThan(beforeResync);
        assertThatThrownBy(() -> watch(node.core(), beforeResync - 5)).isInstanceOf(HistoryExpiredException.class);

        // One read at a time: a stalled reader holds the only one (its byte bound is tiny, so it waits).
        long from = node.history().floorRevision() + 1;
        PullSink stalled = new PullSink();
        stalled.polls = 2;
        stalled.start(node.core()
                .watch(
                        WatchSpec.of(KeyRange.prefix(EtcdLog.key("/k")), WatchEventEncodings.JSON)
                                .from(from)
                                .build(),
                        stalled));
        stalled.wakeUp();
        await().atMost(WAIT).until(() -> node.history().readsHeld() == 1);
        assertThatThrownBy(() -> watch(node.core(), from - 1)).isInstanceOf(TooManyReadsException.class);
        stalled.polls = Integer.MAX_VALUE;
        stalled.wakeUp();
        awaitEvents(stalled, from);
    }
}

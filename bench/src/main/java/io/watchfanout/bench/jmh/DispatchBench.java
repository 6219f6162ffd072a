package io.watchfanout.bench.jmh;

import com.google.protobuf.ByteString;
import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.watch.CacheFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSink;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * One event through the node's dispatch: {@link CacheFeed#applyRevision} (cache and history
 * update, index lookup, one encode per encoding, a shared frame offered to every matching
 * watcher) and then each matching watcher's {@link Watcher#poll} (what the transport does
 * before its write). {@code watchers} are open, {@code matching} of them watch the event's
 * key (a prefix range); the others watch other prefixes and single keys, so the index holds
 * both kinds.
 *
 * <p>One op is one event and {@code matching} deliveries: time and {@code gc.alloc.rate.norm}
 * (with {@code -prof gc}) per delivery are the op's figures divided by {@code matching}; with
 * {@code matching = 1} the op is dominated by the event's one encode.
 *
 * <p>Events are built before each iteration (outside the measurement): a pool of distinct
 * revisions sharing one key-value, since the cache checks only that revisions advance.
 */
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class DispatchBench extends NanosPerOperation {
    private static final int POOL = 3_000_000;

    @Param({"100", "10000"})
    public int watchers;

    @Param({"1", "100"})
    public int matching;

    /** {@code json} or {@code protobuf}: one of the HTTP API's encodings. */
    @Param({"json"})
    public String encodingName;

    private Encoding encoding;

    private WatchCore hub;
    private CacheFeed feed;
    private final List<Watch> matched = new ArrayList<>();
    private final List<ByteBuffer> out = new ArrayList<>(64);
    private KeyValue kv;
    private KeyValue prev;
    private List<List<Event>> pool;
    private int next;
    private long revision = 1;

    @Setup(Level.Trial)
    public void setup() throws Exception {
        if (matching > watchers) {
            throw new IllegalArgumentException("matching " + matching + " > watchers " + watchers);
        }
        encoding = "protobuf".equals(encodingName) ? WatchEventEncodings.PROTOBUF : WatchEventEncodings.JSON;
        hub = new WatchCore(CoreSettings.of(10_000, Duration.ofHours(1), 256, "bench"), new FrameEncoder());
        feed = hub.feed();
        feed.startAt(revision);
        feed.markReady();
        ByteString key = BenchEvents.key("/registry/pods/default/web-00042");
        prev = BenchEvents.kv(key, BenchEvents.value(1024, 1), 1);
        kv = BenchEvents.kv(key, BenchEvents.value(1024, 2), 2);
        WatchSink idle = () -> {};
        for (int i = 0; i < matching; i++) {
            matched.add(hub.watch(
                    WatchSpec.of(KeyRange.prefix(BenchEvents.key("/registry/pods/")), encoding)
                            .build(),
                    idle));
        }
        for (int i = matching; i < watchers; i++) {
            KeyRange range = i % 2 == 0
                    ? KeyRange.prefix(BenchEvents.key(String.format("/registry/configmaps/ns-%06d/", i)))
                    : KeyRange.single(BenchEvents.key(String.format("/registry/secrets/ns-%06d/s", i)));
            hub.watch(WatchSpec.of(range, encoding).build(), idle);
        }
        if (hub.status().liveWatcherCount() != watchers) {
            throw new IllegalStateException(
                    "live watchers " + hub.status().liveWatcherCount() + " (expected: " + watchers + ")");
        }
    }

    @Setup(Level.Iteration)
    public void fillPool() {
        pool = null;
        List<List<Event>> p = new ArrayList<>(POOL);
        for (int i = 0; i < POOL; i++) {
            p.add(List.of(BenchEvents.put(kv, prev, revision + 1 + i)));
        }
        pool = p;
        next = 0;
    }

    @Benchmark
    public int dispatchOneEvent() {
        if (next == POOL) {
            fillPool(); // only if an iteration outruns the pool; counted, but amortized over POOL events
        }
        List<Event> events = pool.get(next++);
        revision = events.get(0).getRevision();
        feed.applyRevision(events, 0);
        int frames = 0;
        for (int i = 0; i < matched.size(); i++) {
            out.clear();
            matched.get(i).poll(out, 64);
            frames += out.size();
        }
        return frames;
    }
}

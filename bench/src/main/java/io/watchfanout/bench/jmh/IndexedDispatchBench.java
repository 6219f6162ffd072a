package io.watchfanout.bench.jmh;

import com.google.protobuf.ByteString;
import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.AttributeExtractor;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.ObjectAttributes;
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
 * The kubelet pattern through the node's dispatch: {@code watchers} watch the same key range
 * (all pods), each registered under its own index value (its node's name) with a selector on it,
 * and each event's object carries one node's name, so it matches exactly one watcher. With
 * indexed dispatch the cost per event is the same at 100 and at 10,000 watchers: the event visits
 * one bucket, not the range's watchers.
 *
 * <p>One op is one event through {@link CacheFeed#applyRevision} and the matching watcher's
 * {@link Watch#poll}. The extractor reads the node from the key's last five digits, so the
 * figure is the core's, not an object decoder's.
 */
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class IndexedDispatchBench extends NanosPerOperation {
    private static final int POOL = 2_000_000;

    @Param({"100", "10000"})
    public int watchers;

    private WatchCore hub;
    private CacheFeed feed;
    private final List<Watch> all = new ArrayList<>();
    private final List<ByteBuffer> out = new ArrayList<>(64);
    private List<List<Event>> pool;
    private KeyValue[] kvs;
    private KeyValue[] prevs;
    private int next;
    private int target;
    private long revision = 1;

    /** The node of a pod key ".../web-NNNNN": node-NNNNN. */
    private record Node(String name) implements ObjectAttributes {
        @Override
        public String indexValue(int index) {
            return name;
        }
    }

    private static final AttributeExtractor NODE_OF_KEY = new AttributeExtractor() {
        @Override
        public ObjectAttributes extract(KeyValue kv) {
            ByteString key = kv.getKey();
            return new Node("node-" + key.substring(key.size() - 5).toStringUtf8());
        }

        @Override
        public int indexCount() {
            return 1;
        }
    };

    @Setup(Level.Trial)
    public void setup() throws Exception {
        hub = new WatchCore(CoreSettings.of(10_000, Duration.ofHours(1), 256, "bench"), new FrameEncoder());
        hub.useAttributes(NODE_OF_KEY);
        feed = hub.feed();
        feed.startAt(revision);
        feed.markReady();
        WatchSink idle = () -> {};
        for (int i = 0; i < watchers; i++) {
            String node = String.format("node-%05d", i);
            all.add(hub.watch(
                    WatchSpec.of(KeyRange.prefix(BenchEvents.key("/registry/pods/")), WatchEventEncodings.JSON)
                            .selector(a -> a != null && node.equals(((Node) a).name()))
                            .indexed(0, node)
                            .build(),
                    idle));
        }
    }

    @Setup(Level.Iteration)
    public void fillPool() {
        pool = null;
        if (kvs == null) {
            // One pod per node, shared by every event of that pod: the pool holds events, not values.
            kvs = new KeyValue[watchers];
            prevs = new KeyValue[watchers];
            ByteString before = BenchEvents.value(1024, 1);
            ByteString after = BenchEvents.value(1024, 2);
            for (int i = 0; i < watchers; i++) {
                ByteString key = BenchEvents.key(String.format("/registry/pods/default/web-%05d", i));
                prevs[i] = BenchEvents.kv(key, before, 1);
                kvs[i] = BenchEvents.kv(key, after, 2);
            }
        }
        List<List<Event>> p = new ArrayList<>(POOL);
        for (int i = 0; i < POOL; i++) {
            int pod = (next + i) % watchers;
            p.add(List.of(BenchEvents.put(kvs[pod], prevs[pod], revision + 1 + i)));
        }
        pool = p;
        target = next % watchers;
        next = 0;
    }

    @Benchmark
    public int dispatchOneEvent() {
        if (next == POOL) {
            fillPool();
        }
        List<Event> events = pool.get(next++);
        revision = events.get(0).getRevision();
        feed.applyRevision(events, 0);
        out.clear();
        all.get(target).poll(out, 64);
        target = target + 1 == watchers ? 0 : target + 1;
        return out.size();
    }
}

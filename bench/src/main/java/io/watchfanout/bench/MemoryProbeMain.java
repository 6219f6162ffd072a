package io.watchfanout.bench;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.kafka.StateValueDeserializer;
import io.watchfanout.fanout.watch.CacheFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.ValueArena;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.schema.EventsRecordDeserializer;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateRecord;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.management.ObjectName;

/**
 * The memory scenario's child JVM: a fan-out node's watch core in a fresh heap, fed as the
 * Kafka side feeds it, measured after full GCs at each step. Records go through the node's own
 * deserializers: state records as the rebuild parses them (values into its {@code ValueArena}, keys
 * into arrays of their own), events records through the schema's (aliasing, so every event's
 * key-value is a view of its record's array), as in the node.
 *
 * <p>Steps: the empty JVM; the state of K keys loaded ({@code loadState}, {@code startAt}) with
 * the window empty; W single-event revisions applied (MODIFIED with their previous key-value,
 * spread evenly over the keys) to fill the history window; one JSON watch from the window's start
 * polled to its end, so that every window event's JSON frame is encoded once and memoized as
 * dispatch does. Prints one line {@code MEMORY-RESULT name=value ...} (bytes) and, with a
 * histogram size, the top lines of {@code GC.class_histogram} at the end prefixed by
 * {@code HISTO }. Single-threaded; exits with 1 on any failure.
 */
public final class MemoryProbeMain {
    private static final int KEYS_PER_NAMESPACE = 1000;

    private MemoryProbeMain() {}

    /** {@code keys valueBytes windowEvents histogramLines}. */
    public static void main(String[] args) throws Exception {
        int keys = Integer.parseInt(args[0]);
        int valueBytes = Integer.parseInt(args[1]);
        int windowEvents = Integer.parseInt(args[2]);
        int histogramLines = Integer.parseInt(args[3]);
        // A small core first, so that the classes, descriptors and statics it needs are not charged to the keys.
        encodeWindowFrames(fill(load(1000, valueBytes, 100), 1000, valueBytes, 100));
        Map<String, Long> out = new LinkedHashMap<>();
        measure(out, "base");

        WatchCore core = load(keys, valueBytes, windowEvents);
        out.put("keyBytes", (long) key(0).length);
        measure(out, "state");
        fill(core, keys, valueBytes, windowEvents);
        out.put("windowEvents", (long) core.status().historySize());
        measure(out, "window");

        encodeWindowFrames(core);
        out.put("memoFrames", core.frameEncoder().memoizedFrames());
        out.put("memoBytes", core.frameEncoder().memoizedBytes());
        measure(out, "frames");
        out.put("cachedKeys", (long) core.status().keyCount());

        StringBuilder line = new StringBuilder("MEMORY-RESULT");
        out.forEach((k, v) -> line.append(' ').append(k).append('=').append(v));
        System.out.println(line);
        if (histogramLines > 0) {
            String[] histo = classHistogram().split("\n");
            for (int i = 0; i < Math.min(histogramLines + 2, histo.length); i++) {
                System.out.println("HISTO " + histo[i]);
            }
        }
        Reference.reachabilityFence(core);
        System.out.println("MEMORY-DONE");
        System.out.flush();
    }

    /** A core with the state of {@code keys} keys loaded from parsed state records, its window empty. */
    private static WatchCore load(int keys, int valueBytes, int historyMaxEvents) {
        List<KeyValue> sorted = new ArrayList<>(keys);
        ValueArena arena = new ValueArena();
        StateValueDeserializer parser = new StateValueDeserializer(arena);
        for (int i = 0; i < keys; i++) {
            KeyValue kv = kv(i, 0, valueBytes);
            sorted.add(parser.deserialize(
                            "state", StateRecord.newBuilder().setKv(kv).build().toByteArray())
                    .kv());
        }
        WatchCore core = new WatchCore(
                CoreSettings.of(Math.max(1, historyMaxEvents), Duration.ofDays(1), 1000, "memory"), new FrameEncoder());
        core.feed().loadState(sorted, arena);
        core.feed().startAt(keys);
        core.feed().markReady();
        return core;
    }

    /**
     * Applies {@code events} single-event revisions from parsed events records, MODIFIED with their
     * previous key-value, spread evenly over the keys (each key once while events <= keys).
     */
    private static WatchCore fill(WatchCore core, int keys, int valueBytes, int events) {
        CacheFeed feed = core.feed();
        EventsRecordDeserializer parser = new EventsRecordDeserializer();
        int stride = Math.max(1, keys / Math.max(1, events));
        for (int j = 0; j < events; j++) {
            long at = (long) j * stride;
            int k = (int) (at % keys);
            int version = (int) (at / keys) + 1;
            long revision = keys + 1L + j;
            Event e = Event.newBuilder()
                    .setType(Event.Type.PUT)
                    .setKv(kv(k, version, valueBytes).toBuilder()
                            .setModRevision(revision)
                            .build())
                    .setPrevKv(kv(k, version - 1, valueBytes))
                    .setRevision(revision)
                    .setIndex(0)
                    .setCount(1)
                    .setPrevRevision(revision - 1)
                    .build();
            byte[] record = EventsRecord.newBuilder().setEvent(e).build().toByteArray();
            feed.applyRevision(List.of(parser.deserialize("events", record).getEvent()), 0);
        }
        return core;
    }

    /**
     * A key like Kubernetes' pods, {@code /registry/pods/ns-XXXX/name-YYYYYY}, in ascending byte
     * order of {@code i}.
     */
    static byte[] key(int i) {
        return String.format(
                        Locale.ROOT, "/registry/pods/ns-%04d/name-%06d", i / KEYS_PER_NAMESPACE, i % KEYS_PER_NAMESPACE)
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** Key {@code i} at its {@code version}-th modification (0 = as loaded), a value of its own bytes. */
    private static KeyValue kv(int i, int version, int valueBytes) {
        byte[] v = new byte[valueBytes];
        for (int b = 0; b < valueBytes; b++) {
            v[b] = (byte) ('a' + (i + version + b) % 26);
        }
        return KeyValue.newBuilder()
                .setKey(com.google.protobuf.UnsafeByteOperations.unsafeWrap(key(i)))
                .setValue(com.google.protobuf.UnsafeByteOperations.unsafeWrap(v))
                .setCreateRevision(i + 1L)
                .setModRevision(i + 1L)
                .setVersion(version + 1L)
                .build();
    }

    /** A JSON watch from the window's start, polled until it is live: each window event's frame is memoized. */
    private static void encodeWindowFrames(WatchCore core) throws Exception {
        WatchSpec spec = WatchSpec.of(KeyRange.all(), WatchEventEncodings.JSON)
                .from(core.servableFromRevision())
                .build();
        Watch w = core.watch(spec, () -> {});
        List<ByteBuffer> frames = new ArrayList<>();
        long delivered = 0;
        while (true) {
            frames.clear();
            Watch.PollResult r = w.poll(frames, 1024);
            delivered += frames.size();
            if (r == Watch.PollResult.END) {
                throw new IllegalStateException(
                        "the watch from the window's start ended after " + delivered + " frames");
            }
            if (r == Watch.PollResult.IDLE) {
                break;
            }
        }
        w.close();
        if (delivered < core.status().historySize()) {
            throw new IllegalStateException("the watch from the window's start got " + delivered
                    + " frames, the window holds " + core.status().historySize() + " events");
        }
    }

    /** Live heap after full GCs, RSS, and direct buffers, as {@code <step>Heap}, {@code <step>Rss}, {@code <step>Direct}. */
    private static void measure(Map<String, Long> out, String step) {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        out.put(
                step + "Heap",
                ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        out.put(step + "Rss", Proc.rssBytes(Proc.self()));
        long direct = 0;
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                direct = pool.getMemoryUsed();
            }
        }
        out.put(step + "Direct", direct);
    }

    /** {@code jcmd <self> GC.class_histogram}, in process (it collects first: live objects only). */
    private static String classHistogram() throws Exception {
        return (String) ManagementFactory.getPlatformMBeanServer()
                .invoke(
                        new ObjectName("com.sun.management:type=DiagnosticCommand"),
                        "gcClassHistogram",
                        new Object[] {new String[0]},
                        new String[] {String[].class.getName()});
    }
}

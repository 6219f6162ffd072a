package io.watchfanout.fanout.e2e;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent.EventType;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.WatchEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What a direct jetcd watch on the same range from the same revision sees, mapped to watch
 * frames as README.md, "The watch protocol", says: PUT of version 1 → ADDED, other PUT → MODIFIED, DELETE → DELETED
 * with the previous key-value as the object.
 */
public final class Expected {
    private Expected() {}

    /** A frame reduced to what a direct etcd watch determines: type, object, revision. */
    public record Frame(WatchEvent.Type type, KeyValue object, long revision) {}

    static KeyValue kv(io.etcd.jetcd.KeyValue kv) {
        return KeyValue.newBuilder()
                .setKey(ByteString.copyFrom(kv.getKey().getBytes()))
                .setCreateRevision(kv.getCreateRevision())
                .setModRevision(kv.getModRevision())
                .setVersion(kv.getVersion())
                .setValue(ByteString.copyFrom(kv.getValue().getBytes()))
                .setLease(kv.getLease())
                .build();
    }

    /**
     * Events of a direct watch on {@code [key, rangeEnd)} (rangeEnd empty: the key alone)
     * after {@code fromRevision} up to {@code toRevision}.
     */
    public static List<Frame> directWatch(
            Client etcd, ByteString key, ByteString rangeEnd, long fromRevision, long toRevision) throws Exception {
        List<Frame> out = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        WatchOption.Builder option = WatchOption.builder()
                .withRevision(fromRevision + 1)
                .withPrevKV(true)
                .withProgressNotify(true);
        if (!rangeEnd.isEmpty()) {
            option.withRange(ByteSequence.from(rangeEnd));
        }
        Watch.Watcher watcher = etcd.getWatchClient()
                .watch(ByteSequence.from(key), option.build(), Watch.listener(response -> {
                    synchronized (out) {
                        boolean reached = false;
                        for (io.etcd.jetcd.watch.WatchEvent e : response.getEvents()) {
                            long revision = e.getKeyValue().getModRevision();
                            reached |= revision >= toRevision;
                            if (revision > toRevision) {
                                continue;
                            }
                            if (e.getEventType() == EventType.DELETE) {
                                out.add(new Frame(WatchEvent.Type.DELETED, kv(e.getPrevKV()), revision));
                            } else {
                                out.add(new Frame(
                                        e.getKeyValue().getVersion() == 1
                                                ? WatchEvent.Type.ADDED
                                                : WatchEvent.Type.MODIFIED,
                                        kv(e.getKeyValue()),
                                        revision));
                            }
                        }
                        if (reached
                                || response.isProgressNotify()
                                        && response.getHeader().getRevision() >= toRevision) {
                            done.countDown();
                        }
                    }
                }));
        try {
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("direct watch did not reach revision " + toRevision);
            }
        } finally {
            watcher.close();
        }
        synchronized (out) {
            return new ArrayList<>(out);
        }
    }

    /** The event frames of a watch stream, reduced like {@link #directWatch}. */
    public static List<Frame> received(List<WatchEvent> frames) {
        List<Frame> out = new ArrayList<>();
        for (WatchEvent f : frames) {
            if (f.getType() == WatchEvent.Type.ADDED
                    || f.getType() == WatchEvent.Type.MODIFIED
                    || f.getType() == WatchEvent.Type.DELETED) {
                out.add(new Frame(f.getType(), f.getObject(), f.getResourceVersion()));
            }
        }
        return out;
    }
}

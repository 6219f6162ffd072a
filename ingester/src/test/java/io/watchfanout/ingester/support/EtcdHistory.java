package io.watchfanout.ingester.support;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.watchfanout.ingester.etcd.EtcdEvents;
import io.watchfanout.schema.v1.Event;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What a direct jetcd watch on a key prefix sees between two revisions: the reference that
 * the events topic must equal.
 */
public final class EtcdHistory {
    private EtcdHistory() {}

    /**
     * Events of keys with {@code prefix} with revision in {@code [fromRevision, toRevision]},
     * in etcd order, from a jetcd watch with prev_kv.
     */
    public static List<Event> events(Client client, ByteString prefix, long fromRevision, long toRevision)
            throws Exception {
        List<Event> out = new ArrayList<>();
        if (fromRevision > toRevision) {
            return out;
        }
        CountDownLatch done = new CountDownLatch(1);
        Throwable[] failure = {null};
        WatchOption option = WatchOption.builder()
                .withRevision(fromRevision)
                .withPrevKV(true)
                .withProgressNotify(true)
                .isPrefix(true)
                .build();
        Watch.Watcher w = client.getWatchClient()
                .watch(
                        ByteSequence.from(prefix),
                        option,
                        Watch.listener(
                                response -> {
                                    synchronized (out) {
                                        boolean reached = false;
                                        for (io.etcd.jetcd.watch.WatchEvent e : response.getEvents()) {
                                            Event event = EtcdEvents.toEvent(e);
                                            if (event.getRevision() <= toRevision) {
                                                out.add(event);
                                            }
                                            reached |= event.getRevision() >= toRevision;
                                        }
                                        // A progress notification comes only to a synced watcher: it has seen
                                        // everything.
                                        if (reached
                                                || response.isProgressNotify()
                                                        && response.getHeader().getRevision() >= toRevision) {
                                            done.countDown();
                                        }
                                    }
                                },
                                error -> {
                                    failure[0] = error;
                                    done.countDown();
                                }));
        try {
            if (!done.await(60, TimeUnit.SECONDS)) {
                throw new AssertionError("direct watch did not reach revision " + toRevision);
            }
        } finally {
            w.close();
        }
        if (failure[0] != null) {
            throw new AssertionError("direct watch failed", failure[0]);
        }
        synchronized (out) {
            return new ArrayList<>(out);
        }
    }
}

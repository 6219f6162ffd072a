package io.watchfanout.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/**
 * W jetcd watchers of one prefix, spread over a few clients (each jetcd client multiplexes its
 * watches over its gRPC connection), against etcd or an {@code etcd grpc-proxy}. Counts events
 * and records put→event latency from the value's stamp on every {@code sampleEvery}-th watcher.
 */
final class EtcdWatchers implements AutoCloseable {
    private final List<Client> clients = new ArrayList<>();
    private final List<Watch.Watcher> watchers = new ArrayList<>();
    private final LongAdder events = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private final Recorder latency = new Recorder(TimeUnit.SECONDS.toMicros(60), 3);

    EtcdWatchers(String endpoint, String prefix, int count, int clientCount, int sampleEvery) {
        for (int i = 0; i < clientCount; i++) {
            clients.add(Client.builder()
                    .endpoints(endpoint)
                    .maxInboundMessageSize(64 << 20)
                    .build());
        }
        ByteSequence key = ByteSequence.from(prefix, StandardCharsets.UTF_8);
        WatchOption option = WatchOption.builder().isPrefix(true).build();
        for (int i = 0; i < count; i++) {
            boolean sampled = i % Math.max(1, sampleEvery) == 0;
            watchers.add(clients.get(i % clientCount)
                    .getWatchClient()
                    .watch(
                            key,
                            option,
                            Watch.listener(
                                    r -> {
                                        List<WatchEvent> ev = r.getEvents();
                                        events.add(ev.size());
                                        if (sampled) {
                                            long now = System.nanoTime();
                                            for (WatchEvent e : ev) {
                                                long stamp = LatencyStamp.fromBytes(
                                                        com.google.protobuf.ByteString.copyFrom(e.getKeyValue()
                                                                .getValue()
                                                                .getBytes()));
                                                long micros = (now - stamp) / 1000;
                                                if (stamp > 0
                                                        && micros >= 0
                                                        && micros < TimeUnit.SECONDS.toMicros(60)) {
                                                    latency.recordValue(micros);
                                                }
                                            }
                                        }
                                    },
                                    t -> errors.increment())));
        }
    }

    long events() {
        return events.sum();
    }

    long errors() {
        return errors.sum();
    }

    Recorder latency() {
        return latency;
    }

    @Override
    public void close() {
        watchers.forEach(Watch.Watcher::close);
        clients.forEach(Client::close);
    }
}

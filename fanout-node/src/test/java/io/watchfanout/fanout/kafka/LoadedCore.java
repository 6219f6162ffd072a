package io.watchfanout.fanout.kafka;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.schema.EventsRecordSerializer;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.testkit.KafkaBroker;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A watch core and the started loader that rebuilds it from a topic prefix, without staleness
 * checks or preloaded history; closing closes both. For the loader's tests.
 *
 * @param core the core the loader feeds
 * @param loader the loader, started
 * @param progress the loader's progress
 */
record LoadedCore(WatchCore core, KafkaCacheLoader loader, RebuildProgress progress) implements AutoCloseable {
    /** A core of {@code nodeId} and a loader of {@code prefix}'s topics into it, started. */
    static LoadedCore start(KafkaBroker kafka, String prefix, String nodeId) {
        WatchCore core = new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 256, nodeId), new FrameEncoder());
        RebuildProgress progress = new RebuildProgress();
        KafkaCacheLoader loader = new KafkaCacheLoader(
                kafka.bootstrapServers(),
                KafkaClientSettings.NONE,
                prefix,
                core.feed(),
                progress,
                nodeId,
                Duration.ZERO,
                0);
        loader.start();
        return new LoadedCore(core, loader, progress);
    }

    /** Sends {@code records} to {@code topic} in one transaction, each keyed as the ingester keys it. */
    static void send(KafkaProducer<byte[], byte[]> producer, String topic, List<EventsRecord> records) {
        EventsRecordSerializer ser = new EventsRecordSerializer();
        producer.beginTransaction();
        for (EventsRecord r : records) {
            byte[] k = r.hasEvent() ? r.getEvent().getKv().getKey().toByteArray() : new byte[0];
            producer.send(new ProducerRecord<>(topic, k, ser.serialize(topic, r)));
        }
        producer.commitTransaction();
    }

    @Override
    public void close() {
        loader.close();
        core.close();
    }
}

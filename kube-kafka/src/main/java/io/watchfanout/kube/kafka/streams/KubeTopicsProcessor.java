package io.watchfanout.kube.kafka.streams;

import com.google.gson.JsonObject;
import com.google.protobuf.InvalidProtocolBufferException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.kube.kafka.CloudEventHeaders;
import io.watchfanout.kube.kafka.DecodeResult;
import io.watchfanout.kube.kafka.KubeEventDecoder;
import io.watchfanout.kube.kafka.KubeWatchEvent;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The Kubernetes topics application's one processor: decodes each events-topic record once
 * ({@link KubeEventDecoder}) and forwards the watch event to the change-topic sink
 * ({@link KubeTopicsTopology#CHANGES}), the object (or a tombstone after a deletion) to the
 * latest-object sink ({@link KubeTopicsTopology#LATEST}), and a value that cannot be decoded, as a
 * JSON description naming key, revision and reason, to the errors sink
 * ({@link KubeTopicsTopology#ERRORS}). Records carrying no object are skipped.
 *
 * <p>Topics: before the first record of a resource is forwarded, its two topics exist
 * ({@link TopicEnsurer}, called on this thread): the resources served at start when the task
 * starts, a custom resource's when its CRD's event is decoded.
 *
 * <p>CRDs survive restarts: each CRD's stored key-value is kept in the state store
 * {@link KubeTopicsTopology#DEFINITIONS} (changelogged, so exactly as far as the committed
 * offsets), and a task starting anywhere in the topic learns them before its first record.
 *
 * <p>Not thread-safe: one instance per task, as Kafka Streams makes them.
 */
final class KubeTopicsProcessor implements Processor<byte[], byte[], String, Object> {
    private final String topicPrefix;
    private final KubeEventDecoder decoder;
    private final ResourceFilter filter;
    private final TopicEnsurer topics;
    private final KubeTopicsMetrics metrics;
    /** Resources whose topics this task ensured. */
    private final Set<KubeResource> ensured = new HashSet<>();

    private ProcessorContext<String, Object> context;
    private KeyValueStore<String, byte[]> definitions;
    private KubeResources served;

    KubeTopicsProcessor(
            String topicPrefix,
            KubeEventDecoder decoder,
            ResourceFilter filter,
            TopicEnsurer topics,
            KubeTopicsMetrics metrics) {
        this.topicPrefix = topicPrefix;
        this.decoder = decoder;
        this.filter = filter;
        this.topics = topics;
        this.metrics = metrics;
    }

    @Override
    public void init(ProcessorContext<String, Object> context) {
        this.context = context;
        this.definitions = context.getStateStore(KubeTopicsTopology.DEFINITIONS);
        try (KeyValueIterator<String, byte[]> all = definitions.all()) {
            while (all.hasNext()) {
                decoder.learn(parse(all.next()));
            }
        }
        topics.ensure(List.of(KubeTopicNames.errors(topicPrefix)), TopicEnsurer.Retention.DELETE);
        ensureServed();
    }

    private static KeyValue parse(org.apache.kafka.streams.KeyValue<String, byte[]> entry) {
        try {
            return KeyValue.parseFrom(entry.value);
        } catch (InvalidProtocolBufferException e) {
            // Written by this class from a parsed KeyValue: only a corrupt store gets here.
            throw new IllegalStateException("state store entry " + entry.key + " is no KeyValue", e);
        }
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
        EventsRecord events;
        try {
            events = EventsRecord.parseFrom(record.value() == null ? new byte[0] : record.value());
        } catch (InvalidProtocolBufferException e) {
            error(
                    record,
                    new DecodeResult.Undecodable(
                            record.key() == null ? "" : new String(record.key(), StandardCharsets.UTF_8),
                            0,
                            DecodeResult.Reason.CORRUPT,
                            "not an events record: " + e.getMessage()));
            return;
        }
        metrics.processed(revisionOf(events), record.timestamp());
        if (events.hasEvent()) {
            keepDefinition(events.getEvent());
        }
        DecodeResult result = decoder.decode(events, Instant.ofEpochMilli(record.timestamp()));
        if (result instanceof DecodeResult.Decoded d) {
            if (decoder.resources() != served) {
                ensureServed();
            }
            publish(record, d.event());
        } else if (result instanceof DecodeResult.Undecodable u) {
            if (decoder.resources() != served) {
                ensureServed();
            }
            error(record, u);
        } else {
            metrics.skipped();
        }
    }

    /** The etcd revision of an events record: its event's or its progress record's, 0 for other records. */
    static long revisionOf(EventsRecord r) {
        return switch (r.getBodyCase()) {
            case EVENT -> r.getEvent().getRevision();
            case PROGRESS -> r.getProgress().getRevision();
            default -> 0;
        };
    }

    /** Keeps (or forgets) a CRD's stored key-value, whether or not its value decodes. */
    private void keepDefinition(Event e) {
        Optional<KubeResources.ObjectKey> key =
                decoder.resources().parse(e.getKv().getKey().toByteArray());
        if (key.isEmpty() || !isDefinitions(key.get().resource())) {
            return;
        }
        String k = e.getKv().getKey().toStringUtf8();
        if (e.getType() == Event.Type.DELETE) {
            definitions.delete(k);
        } else {
            definitions.put(k, e.getKv().toByteArray());
        }
    }

    private static boolean isDefinitions(KubeResource r) {
        return r.group().equals("apiextensions.k8s.io") && r.plural().equals("customresourcedefinitions");
    }

    /** Ensures the topics of every resource served now and published, once per resource per task. */
    private void ensureServed() {
        served = decoder.resources();
        List<KubeResource> missing = new ArrayList<>();
        List<String> changes = new ArrayList<>();
        List<String> latest = new ArrayList<>();
        for (KubeResource r : served.all()) {
            String name = KubeTopicNames.qualified(r);
            if (filter.publishes(name) && !ensured.contains(r)) {
                missing.add(r);
                changes.add(KubeTopicNames.changes(topicPrefix, name));
                latest.add(KubeTopicNames.latest(topicPrefix, name));
            }
        }
        if (!missing.isEmpty()) {
            topics.ensure(changes, TopicEnsurer.Retention.DELETE);
            topics.ensure(latest, TopicEnsurer.Retention.COMPACT);
            ensured.addAll(missing);
        }
    }

    private void publish(Record<byte[], byte[]> in, KubeWatchEvent event) {
        String resource = event.qualifiedResource();
        if (!filter.publishes(resource)) {
            metrics.skipped();
            return;
        }
        String key = event.key();
        context.forward(
                new Record<String, Object>(key, event, in.timestamp(), new RecordHeaders()),
                KubeTopicsTopology.CHANGES);
        RecordHeaders headers = new RecordHeaders();
        headers.add(CloudEventHeaders.REVISION, Long.toString(event.revision()).getBytes(StandardCharsets.US_ASCII));
        LatestObject latest = new LatestObject(
                KubeTopicNames.latest(topicPrefix, resource),
                event.type() == KubeWatchEvent.Type.DELETED ? null : event.object());
        context.forward(new Record<String, Object>(key, latest, in.timestamp(), headers), KubeTopicsTopology.LATEST);
        metrics.written();
    }

    private void error(Record<byte[], byte[]> in, DecodeResult.Undecodable u) {
        JsonObject error = new JsonObject();
        error.addProperty("key", u.key());
        error.addProperty("revision", u.revision());
        error.addProperty("reason", u.reason().name());
        error.addProperty("message", u.message());
        context.forward(
                new Record<String, Object>(u.key(), error.toString(), in.timestamp(), new RecordHeaders()),
                KubeTopicsTopology.ERRORS);
        metrics.countUndecodable(u.reason());
    }
}

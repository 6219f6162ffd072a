package io.watchfanout.kube.kafka.streams;

import io.watchfanout.kube.kafka.KubeEventDecoder;
import io.watchfanout.kube.kafka.KubeWatchEvent;
import io.watchfanout.kube.kafka.KubeWatchEventSerializer;
import io.watchfanout.schema.WatchFanoutSerdes;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.processor.TopicNameExtractor;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kubernetes topics application's topology: the events topic ({@code <prefix>.events}, read
 * as bytes so that a corrupt record reaches the errors topic instead of stopping the application)
 * into {@link KubeTopicsProcessor}, which decodes each record once, then three sinks: the change
 * topics and the latest-object topics, both chosen per record by the object's resource
 * ({@link TopicNameExtractor}), and the errors topic. Stateless apart from the CRDs seen
 * ({@link #DEFINITIONS}).
 */
public final class KubeTopicsTopology {
    /** The source's name. */
    public static final String SOURCE = "events";
    /** The decoding processor's name. */
    public static final String DECODE = "decode";
    /** The change topics' sink. */
    public static final String CHANGES = "changes";
    /** The latest-object topics' sink. */
    public static final String LATEST = "latest";
    /** The errors topic's sink. */
    public static final String ERRORS = "errors";
    /** The state store of the CRDs' stored key-values, by etcd key. */
    public static final String DEFINITIONS = "custom-resource-definitions";

    private KubeTopicsTopology() {}

    /**
     * The topology.
     *
     * @param topicPrefix the deployment's topic prefix
     * @param etcdPrefix kube-apiserver's {@code --etcd-prefix}
     * @param secrets whether Secrets' values are published or redacted
     * @param filter the resources that get topics
     * @param source {@code ce_source} of the change topics' records
     * @param topics creates the per-resource and errors topics before they are written
     * @param metrics counted into by every task
     */
    public static Topology build(
            String topicPrefix,
            String etcdPrefix,
            KubeEventDecoder.SecretPolicy secrets,
            ResourceFilter filter,
            String source,
            TopicEnsurer topics,
            KubeTopicsMetrics metrics) {
        TopicNameExtractor<String, KubeWatchEvent> changeTopic =
                (key, event, context) -> KubeTopicNames.changes(topicPrefix, event.qualifiedResource());
        TopicNameExtractor<String, LatestObject> latestTopic = (key, latest, context) -> latest.topic();
        Topology topology = new Topology();
        topology.addSource(
                SOURCE,
                Serdes.ByteArray().deserializer(),
                Serdes.ByteArray().deserializer(),
                WatchFanoutSerdes.eventsTopic(topicPrefix));
        topology.addProcessor(
                DECODE,
                () -> new KubeTopicsProcessor(
                        topicPrefix, new KubeEventDecoder(etcdPrefix, secrets), filter, topics, metrics),
                SOURCE);
        topology.addStateStore(
                Stores.keyValueStoreBuilder(
                        Stores.persistentKeyValueStore(DEFINITIONS), Serdes.String(), Serdes.ByteArray()),
                DECODE);
        topology.addSink(
                CHANGES, changeTopic, Serdes.String().serializer(), new KubeWatchEventSerializer(source), DECODE);
        topology.addSink(LATEST, latestTopic, Serdes.String().serializer(), new LatestObject.ValueSerializer(), DECODE);
        topology.addSink(
                ERRORS,
                KubeTopicNames.errors(topicPrefix),
                Serdes.String().serializer(),
                Serdes.String().serializer(),
                DECODE);
        return topology;
    }
}

package io.watchfanout.kube.kafka;

import com.google.gson.JsonObject;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The Serdes of the Kubernetes topics, for consumers and Kafka Streams applications: change
 * topics ({@link #watchEvent()}) and latest-object topics ({@link #object()}). Keys are
 * {@code namespace/name} strings ({@code Serdes.String()}). Stateless.
 */
public final class KubeSerdes {
    private KubeSerdes() {}

    /** A change topic's values: {@link KubeWatchEvent}s with their CloudEvents headers. */
    public static Serde<KubeWatchEvent> watchEvent() {
        return Serdes.serdeFrom(new KubeWatchEventSerializer(), new KubeWatchEventDeserializer());
    }

    /** A latest-object topic's values: JSON trees, {@code null} for a tombstone. */
    public static Serde<JsonObject> object() {
        return Serdes.serdeFrom(
                (topic, object) -> object == null ? null : object.toString().getBytes(StandardCharsets.UTF_8),
                new KubeObjectDeserializer());
    }
}

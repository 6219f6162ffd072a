package io.watchfanout.fanout.kube;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.frame.AttributeExtractor;
import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Kubernetes API's reading of stored objects for the watch core: the resource, namespace and
 * name from the key, the labels and every selectable field from the value ({@link KubeItems}),
 * once per event on the feed thread. A key that is no served resource's has no attributes.
 *
 * <p>Thread-safe.
 */
final class KubeAttributes implements AttributeExtractor {
    private final LiveResources live;
    private final KubeItems items;
    private final ByteString prefix;
    /** Told of every change of the objects the Kubernetes API's security reads, or null. */
    private volatile KubeObjects policyObjects;

    KubeAttributes(LiveResources live, KubeItems items, String prefix) {
        this.live = live;
        this.items = items;
        this.prefix = ByteString.copyFromUtf8(prefix.endsWith("/") ? prefix : prefix + "/");
    }

    /** From now on, tells {@code objects} of each change of an RBAC object or a pod ({@link KubeObjects#changed}). */
    void tell(KubeObjects objects) {
        this.policyObjects = objects;
    }

    /**
     * The core's revision observer (feed thread, before the revision is applied): each event's
     * object of a served resource goes to the policy objects, if any; one key parse per event,
     * whatever the watchers.
     */
    void observe(List<Event> events) {
        KubeObjects objects = policyObjects;
        if (objects == null) {
            return;
        }
        for (Event e : events) {
            KeyValue kv = e.getKv();
            if (!kv.getKey().startsWith(prefix)) {
                continue;
            }
            resourceOf(kv.getKey().toByteArray()).ifPresent(k -> objects.changed(k.resource(), kv));
        }
    }

    private Optional<KubeResources.ObjectKey> resourceOf(byte[] key) {
        Optional<KubeResources.ObjectKey> parsed = live.cached().resources().parse(key);
        // A custom resource of a definition newer than the table: read the definitions again.
        return parsed.isPresent() ? parsed : live.current().resources().parse(key);
    }

    @Override
    public ObjectAttributes extract(KeyValue kv) {
        if (!kv.getKey().startsWith(prefix)) {
            return null;
        }
        Optional<KubeResources.ObjectKey> parsed = resourceOf(kv.getKey().toByteArray());
        if (parsed.isEmpty()) {
            return null;
        }
        KubeResources.ObjectKey k = parsed.get();
        try {
            Map<String, String> labels = items.labels(kv);
            Map<String, String> fields = items.fields(kv, k.resource());
            fields.put("metadata.name", k.name());
            fields.put("metadata.namespace", k.namespace());
            return new KubeObjectAttributes(k.resource(), k.namespace(), k.name(), labels, fields, null);
        } catch (UndecodableObjectException e) {
            return new KubeObjectAttributes(k.resource(), k.namespace(), k.name(), Map.of(), Map.of(), e.getMessage());
        }
    }

    @Override
    public int indexCount() {
        return 1;
    }
}

package io.watchfanout.fanout.kube;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.watch.StateEntry;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.kube.codec.CustomResources;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resources served now: the built-ins and the custom resources of the CRDs in the cache, read
 * again whenever a CRD was added, changed or removed (no restart), with their discovery
 * documents. Each request asks {@link #current()}, which compares the stored CRDs' keys and mod
 * revisions with those last read (a short walk over a small range) and rebuilds only on a change.
 *
 * <p>Thread-safe: the table and discovery are immutable and published together.
 */
final class LiveResources {
    private static final Logger LOG = LoggerFactory.getLogger(LiveResources.class);

    /** A table, its discovery documents, and the CRDs (keys and mod revisions) it was made from. */
    record Served(KubeResources resources, KubeDiscovery discovery, List<String> definitions) {}

    private final WatchCore core;
    private final KubeResources builtIn;
    private final KeyRange definitionsRange;
    private final KubeItems items;
    private final String nodeId;
    private volatile Served served;

    LiveResources(WatchCore core, KubeResources builtIn, KubeItems items, String nodeId) {
        this.core = core;
        this.builtIn = builtIn;
        this.items = items;
        this.nodeId = nodeId;
        KubeResource crds = builtIn.byPlural("apiextensions.k8s.io", "v1", "customresourcedefinitions")
                .orElseThrow();
        this.definitionsRange = KeyRange.prefix(ByteString.copyFrom(builtIn.keyPrefix(crds), StandardCharsets.UTF_8));
        this.served = new Served(builtIn, new KubeDiscovery(builtIn), List.of());
    }

    /** The resources as last read, without looking at the stored CRDs (the watch core's feed thread). */
    Served cached() {
        return served;
    }

    /** The resources served now, with the CRDs the cache holds at this moment. */
    Served current() {
        List<StateEntry> stored = core.snapshot(definitionsRange);
        List<String> definitions = new ArrayList<>(stored.size());
        for (StateEntry e : stored) {
            definitions.add(e.kv().getKey().toStringUtf8() + "@" + e.kv().getModRevision());
        }
        Served now = served;
        if (now.definitions().equals(definitions)) {
            return now;
        }
        List<KubeResource> custom = new ArrayList<>();
        for (StateEntry e : stored) {
            String key = e.kv().getKey().toStringUtf8();
            try {
                byte[] json = items.object(e.kv(), KubeFormat.JSON).bytes();
                CustomResources.fromStoredDefinition(json).ifPresent(r -> {
                    if (builtIn.byPlural(r.group(), r.version(), r.plural()).isEmpty()) {
                        custom.add(r);
                    }
                });
            } catch (UndecodableObjectException ex) {
                LOG.warn("[node {}] CustomResourceDefinition {} is not served: {}", nodeId, key, ex.getMessage());
            }
        }
        KubeResources resources = builtIn.with(custom);
        Served next = new Served(resources, new KubeDiscovery(resources), List.copyOf(definitions));
        served = next;
        return next;
    }
}

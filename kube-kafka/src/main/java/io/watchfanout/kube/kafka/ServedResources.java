package io.watchfanout.kube.kafka;

import io.watchfanout.kube.codec.CustomResources;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resources served now: the built-ins and the custom resources of the CRDs seen so far in the
 * events (as the node reads them: a CRD that is not established yet defines nothing, a CRD naming
 * a built-in resource is ignored), rebuilt when a CRD is added, changed or deleted.
 *
 * <p>Not thread-safe: owned by one decoder's thread.
 */
final class ServedResources {
    private static final Logger LOG = LoggerFactory.getLogger(ServedResources.class);

    private final KubeResources builtIn;
    private final KubeResource definitions;
    /** By the CRD's etcd key, in the order first seen. */
    private final Map<String, KubeResource> custom = new LinkedHashMap<>();

    private KubeResources current;

    ServedResources(KubeResources builtIn) {
        this.builtIn = builtIn;
        this.definitions = builtIn.byPlural("apiextensions.k8s.io", "v1", "customresourcedefinitions")
                .orElseThrow();
        this.current = builtIn;
    }

    KubeResources current() {
        return current;
    }

    /** True when {@code resource} is the CustomResourceDefinitions'. */
    boolean isDefinitions(KubeResource resource) {
        return resource.equals(definitions);
    }

    /**
     * Applies the CRD stored under {@code key} (its plain JSON), or its deletion when {@code value}
     * is null. A CRD that cannot be read is logged and defines nothing, as on the node.
     */
    void define(String key, byte[] value) {
        KubeResource before = custom.remove(key);
        if (value != null) {
            try {
                Optional<KubeResource> defined = CustomResources.fromStoredDefinition(value);
                defined.filter(r -> builtIn.byPlural(r.group(), r.version(), r.plural())
                                .isEmpty())
                        .ifPresent(r -> custom.put(key, r));
            } catch (UndecodableObjectException e) {
                LOG.warn("CustomResourceDefinition {} defines no resource: {}", key, e.getMessage());
            }
        }
        if (!Objects.equals(before, custom.get(key))) {
            current = builtIn.with(new ArrayList<>(custom.values()));
        }
    }
}

package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.select.FieldSelector;
import io.watchfanout.kube.codec.select.LabelSelector;
import java.util.Map;

/**
 * What the Kubernetes API's selectors and index look at of one stored object, read once per event
 * ({@link KubeAttributes}): kube-apiserver's {@code ObjLabels} and {@code ObjFields} of a
 * {@code watchCacheEvent}, plus the resource the key belongs to (which the encodings need) and
 * why the value could not be read, if it could not.
 *
 * @param resource the resource of the key
 * @param namespace the namespace from the key, empty for cluster-scoped objects
 * @param name the name from the key
 * @param labels {@code metadata.labels}
 * @param fields every selectable field of the resource, {@code metadata.name} and
 *     {@code metadata.namespace} included
 * @param undecodable why the value could not be read, or null: such an object matches every
 *     selector, so that its watchers get the ERROR event rather than nothing
 */
record KubeObjectAttributes(
        KubeResource resource,
        String namespace,
        String name,
        Map<String, String> labels,
        Map<String, String> fields,
        String undecodable)
        implements ObjectAttributes {
    /** The index of {@code spec.nodeName} (a kubelet's watch of its pods). */
    static final int NODE_NAME = 0;

    @Override
    public String indexValue(int index) {
        return index == NODE_NAME ? fields.get("spec.nodeName") : null;
    }

    /** True when the object is one {@code labels} and {@code fields} select. */
    boolean selectedBy(LabelSelector labels, FieldSelector fields) {
        return undecodable != null || (labels.matches(this.labels) && fields.matches(this.fields));
    }
}

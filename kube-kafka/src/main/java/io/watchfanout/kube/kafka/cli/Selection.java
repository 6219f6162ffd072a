package io.watchfanout.kube.kafka.cli;

import com.google.gson.JsonObject;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.select.LabelSelector;
import io.watchfanout.kube.kafka.KubeWatchEvent;

/**
 * The objects a command asks for, as kubectl's {@code get} selects them: one resource, one namespace
 * or all of them ({@code -n} / {@code -A}; cluster-scoped resources have none), and a label selector
 * ({@code -l}). Immutable and thread-safe.
 *
 * @param resource the resource
 * @param namespace the namespace, or null for every namespace
 * @param labels the label selector; {@link LabelSelector#everything()} for none
 */
record Selection(KubeResource resource, String namespace, LabelSelector labels) {

    /** True when {@code e} is of the resource and namespace asked for; the labels are {@link #matchesLabels}'. */
    boolean matchesResource(KubeWatchEvent e) {
        return e.group().equals(resource.group())
                && e.resource().equals(resource.plural())
                && (namespace == null || !resource.namespaced() || e.namespace().equals(namespace));
    }

    /** True when the object's labels match the selector. */
    boolean matchesLabels(JsonObject object) {
        return labels.isEverything() || labels.matches(Printer.labelsOf(object));
    }

    /** kubectl's words for where nothing was found: {@code in team-a namespace}, or nothing. */
    String where() {
        return namespace == null || !resource.namespaced() ? "" : " in " + namespace + " namespace";
    }
}

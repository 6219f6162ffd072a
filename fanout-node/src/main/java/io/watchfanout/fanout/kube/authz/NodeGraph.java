package io.watchfanout.fanout.kube.authz;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Which node may read what, as kube-apiserver's Node authorizer keeps it
 * (plugin/pkg/auth/authorizer/node, its graph): each pod bound to a node
 * ({@code spec.nodeName}) links the node to the pod and to the Secrets, ConfigMaps and
 * PersistentVolumeClaims the pod references in its namespace. The graph follows pod changes:
 * a pod added, moved or deleted adds or removes its links; an object stays readable while at
 * least one pod on the node references it.
 *
 * <p>Thread-safe: updated by the one thread that applies pod changes, read by any (a decision
 * takes the lock briefly; decisions happen when a request or watch starts, never per event).
 */
public final class NodeGraph {
    /** What one pod links to its node. */
    public record PodLinks(String node, Set<String> secrets, Set<String> configMaps, Set<String> claims) {}

    private final Map<String, PodLinks> pods = new HashMap<>(); // "<ns>/<name>" -> links
    private final Map<String, Map<String, Integer>> readable = new HashMap<>(); // node -> "<res>/<ns>/<name>" -> refs

    /**
     * Records a pod's current links, or its removal ({@code links} null), replacing what the pod
     * linked before.
     *
     * @return true when what the pod links changed (a status update of a pod changes nothing)
     */
    public synchronized boolean pod(String namespace, String name, PodLinks links) {
        String key = namespace + "/" + name;
        PodLinks before = links == null ? pods.remove(key) : pods.put(key, links);
        if (before != null) {
            change(before, namespace, name, -1);
        }
        if (links != null) {
            change(links, namespace, name, +1);
        }
        return !Objects.equals(before, links);
    }

    private void change(PodLinks links, String namespace, String name, int delta) {
        if (links.node().isEmpty()) {
            return;
        }
        Map<String, Integer> refs = readable.computeIfAbsent(links.node(), n -> new HashMap<>());
        adjust(refs, "pods/" + namespace + "/" + name, delta);
        for (String s : links.secrets()) {
            adjust(refs, "secrets/" + namespace + "/" + s, delta);
        }
        for (String c : links.configMaps()) {
            adjust(refs, "configmaps/" + namespace + "/" + c, delta);
        }
        for (String p : links.claims()) {
            adjust(refs, "persistentvolumeclaims/" + namespace + "/" + p, delta);
        }
        if (refs.isEmpty()) {
            readable.remove(links.node());
        }
    }

    private static void adjust(Map<String, Integer> refs, String object, int delta) {
        refs.merge(object, delta, (a, b) -> a + b == 0 ? null : a + b);
    }

    /** True when a pod on {@code node} links it to {@code resource} {@code namespace}/{@code name}. */
    public synchronized boolean linked(String node, String resource, String namespace, String name) {
        Map<String, Integer> refs = readable.get(node);
        return refs != null && refs.containsKey(resource + "/" + namespace + "/" + name);
    }

    /** The pods known, as {@code <namespace>/<name>}: a copy. */
    public synchronized List<String> podKeys() {
        return List.copyOf(pods.keySet());
    }

    /** The number of pods known (for metrics and tests). */
    public synchronized int pods() {
        return pods.size();
    }

    /** A pod's links from lists of names. */
    public static PodLinks links(String node, List<String> secrets, List<String> configMaps, List<String> claims) {
        return new PodLinks(node, new HashSet<>(secrets), new HashSet<>(configMaps), new HashSet<>(claims));
    }
}

package io.watchfanout.kube.kafka;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;

/**
 * One Kubernetes watch event decoded from the events topic, as kube-apiserver's watch would send
 * it: the event type, the object's resource and identity, and the object as kube-apiserver's JSON
 * with {@code metadata.resourceVersion} set.
 *
 * <p>Revisions: {@code resourceVersion} is the revision this event stands for, the object's mod
 * revision for ADDED and MODIFIED, the deletion's revision for DELETED (kube-apiserver's watch
 * cache does the same); {@code previousResourceVersion} is the object's resourceVersion before this
 * event, 0 when it did not exist, so that a consumer proves per object that it missed nothing
 * ({@link ObjectContinuity}).
 *
 * @param type ADDED, MODIFIED or DELETED (a DELETED event carries the object as it was last)
 * @param group API group, empty for the core group
 * @param version API version served ({@code v1})
 * @param kind object kind ({@code Pod})
 * @param resource resource name in paths ({@code pods})
 * @param namespace the object's namespace, empty for cluster-scoped objects
 * @param name the object's name
 * @param resourceVersion the revision this event stands for, {@code >= 1}
 * @param previousResourceVersion the object's resourceVersion before this event; 0 when it did not
 *     exist; {@link #UNKNOWN} when the record did not say (read without headers)
 * @param revision the etcd revision of the events-topic record (for a resync entry, the resync's)
 * @param index position of the event within its revision, 0-based
 * @param resync true for an entry of a resync (the state at a revision, not an etcd event): the
 *     object's history before it is lost, so its previous resourceVersion may not chain
 * @param time when the ingester received the event from etcd (the record's timestamp), or null
 *     when not known
 * @param object the object's JSON bytes (UTF-8), owned by this event: callers must not change them
 */
public record KubeWatchEvent(
        Type type,
        String group,
        String version,
        String kind,
        String resource,
        String namespace,
        String name,
        long resourceVersion,
        long previousResourceVersion,
        long revision,
        int index,
        boolean resync,
        Instant time,
        byte[] object) {

    /** {@link #previousResourceVersion()} of an event whose record did not carry it. */
    public static final long UNKNOWN = -1;

    /** Watch event types of objects, as on kube-apiserver's wire. */
    public enum Type {
        ADDED,
        MODIFIED,
        DELETED
    }

    /** Checks the fields that every event has. */
    public KubeWatchEvent {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(object, "object");
    }

    /** {@code v1} for the core group, else {@code group/version}. */
    public String apiVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** The object's key in the per-resource topics: {@code namespace/name}, or {@code name} when cluster-scoped. */
    public String key() {
        return key(namespace, name);
    }

    /** {@code namespace/name}, or {@code name} when {@code namespace} is empty. */
    public static String key(String namespace, String name) {
        return namespace.isEmpty() ? name : namespace + "/" + name;
    }

    /** The resource as kubectl names it and as topic names carry it: {@code pods}, {@code deployments.apps}. */
    public String qualifiedResource() {
        return group.isEmpty() ? resource : resource + "." + group;
    }

    /** The object parsed into a new JSON tree (a parse per call). */
    public JsonObject objectTree() {
        return JsonParser.parseString(new String(object, StandardCharsets.UTF_8))
                .getAsJsonObject();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KubeWatchEvent e
                && type == e.type
                && resourceVersion == e.resourceVersion
                && previousResourceVersion == e.previousResourceVersion
                && revision == e.revision
                && index == e.index
                && resync == e.resync
                && group.equals(e.group)
                && version.equals(e.version)
                && kind.equals(e.kind)
                && resource.equals(e.resource)
                && namespace.equals(e.namespace)
                && name.equals(e.name)
                && Objects.equals(time, e.time)
                && Arrays.equals(object, e.object);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, group, resource, namespace, name, resourceVersion) * 31 + Arrays.hashCode(object);
    }

    @Override
    public String toString() {
        return type + " " + qualifiedResource() + " " + key() + " resourceVersion=" + resourceVersion + " previous="
                + previousResourceVersion + (resync ? " (resync)" : "");
    }
}

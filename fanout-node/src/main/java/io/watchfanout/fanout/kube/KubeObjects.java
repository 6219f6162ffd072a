package io.watchfanout.fanout.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.kube.authz.NodeGraph;
import io.watchfanout.fanout.kube.authz.PodReferences;
import io.watchfanout.fanout.kube.authz.Rbac;
import io.watchfanout.fanout.kube.authz.RbacObjects;
import io.watchfanout.fanout.kube.authz.ServiceAccountTokens;
import io.watchfanout.fanout.watch.ListPage;
import io.watchfanout.fanout.watch.StateEntry;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.kube.codec.AtRest;
import io.watchfanout.kube.codec.ProtoReader;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the Kubernetes API's security reads from the node's cache of kube-apiserver's objects: the
 * RBAC policy (a {@link Rbac} snapshot of every Role, ClusterRole, RoleBinding and
 * ClusterRoleBinding), the Node authorizer's graph of pods ({@link NodeGraph}), and the UIDs
 * ServiceAccount tokens are checked against ({@link ServiceAccountTokens.Lookup}).
 *
 * <p>Kept current as kube-apiserver's informers keep its own: the watch core's attribute
 * extractor tells {@link #changed} (on the feed thread, a comparison per event) when one of
 * these objects changed; one daemon thread ({@code watchfanout-kube-policy-<node>}) waits until
 * the cache has applied the change, reads the RBAC objects again (decoding only those whose mod
 * revision moved) or the changed pods, and then runs the change listener, which decides the open
 * watches again. A resync, or the first use, reads everything. Nothing here runs per event for
 * other resources, and no decision is taken per event.
 *
 * <p>Thread-safe.
 */
public final class KubeObjects implements ServiceAccountTokens.Lookup, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KubeObjects.class);
    /** The longest wait for the cache to apply a change before the policy is read anyway. */
    private static final Duration APPLY_WAIT = Duration.ofSeconds(5);
    /** How often the thread looks for a resync when nothing changed. */
    private static final long IDLE_MILLIS = 1000;

    private static final Rbac EMPTY = new Rbac(Map.of(), Map.of(), List.of());

    private final WatchCore core;
    private final KubeResources builtIn;
    private final String nodeId;
    private final KubeResource roles;
    private final KubeResource clusterRoles;
    private final KubeResource roleBindings;
    private final KubeResource clusterRoleBindings;
    private final KubeResource pods;
    private final NodeGraph graph = new NodeGraph();
    /** Decoded RBAC objects by key, with the mod revision they were decoded at. Guarded by {@code this}. */
    private final Map<String, Decoded> decoded = new HashMap<>();
    /** Guards the pending changes, apart from the reads, so that the feed thread never waits for a read. */
    private final Object pending = new Object();
    /** Pods changed since the thread last looked: key to the revision that applies the change; guarded by {@code pending}. */
    private final Map<String, Long> changedPods = new LinkedHashMap<>();

    private volatile Rbac rbac = EMPTY;
    private volatile Runnable onChange = () -> {};
    /** Guarded by {@code pending}: the revision that applies the last RBAC change not yet read, 0 for none. */
    private long rbacChangedAt;
    /** Guarded by {@code pending}: the cache revision to await before reading, 0 for nothing pending. */
    private long pendingRevision;
    /** Guarded by {@code this}: the resync revision the last full read saw, -1 before the first. */
    private volatile long readAtResync = -1;

    private Thread thread;
    private volatile boolean closed;

    private record Decoded(long modRevision, Object value) {}

    /**
     * The objects of kube-apiserver under {@code prefix} ({@code --kube-prefix}) in {@code core}'s
     * cache; nothing is read until asked.
     */
    public KubeObjects(WatchCore core, String prefix, String nodeId) {
        this.core = core;
        this.builtIn = KubeResources.builtIn(prefix);
        this.nodeId = nodeId;
        this.roles = resource("rbac.authorization.k8s.io", "roles");
        this.clusterRoles = resource("rbac.authorization.k8s.io", "clusterroles");
        this.roleBindings = resource("rbac.authorization.k8s.io", "rolebindings");
        this.clusterRoleBindings = resource("rbac.authorization.k8s.io", "clusterrolebindings");
        this.pods = resource("", "pods");
    }

    private KubeResource resource(String group, String plural) {
        return builtIn.byPlural(group, "v1", plural).orElseThrow();
    }

    /** Runs {@code listener} on the policy thread after every change of the RBAC policy or the graph. */
    void onChange(Runnable listener) {
        this.onChange = listener;
    }

    /** Starts the thread that follows changes; once. */
    synchronized void start() {
        if (thread != null) {
            return;
        }
        thread = new Thread(this::run, "watchfanout-kube-policy-" + nodeId);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() {
        closed = true;
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            t.interrupt();
        }
    }

    /** The RBAC policy in force: read from the cache on the first call once the node serves. */
    Rbac rbac() {
        ensureRead();
        return rbac;
    }

    /** The Node authorizer's graph. */
    NodeGraph graph() {
        ensureRead();
        return graph;
    }

    /**
     * From the core's revision observer on the feed thread, before the cache applies the event: an
     * object of {@code resource} changed ({@code kv} the event's key-value: its new value, or for a
     * deletion the key at the deletion's revision).
     */
    void changed(KubeResource resource, KeyValue kv) {
        long revision = core.status().revision();
        boolean policy = resource.group().equals("rbac.authorization.k8s.io");
        if (!policy && !(resource.group().isEmpty() && resource.plural().equals("pods"))) {
            return;
        }
        // The event is applied after this call: its revision is above the cache's now.
        long after = Math.max(kv.getModRevision(), revision + 1);
        synchronized (pending) {
            if (policy) {
                rbacChangedAt = Math.max(rbacChangedAt, after);
            } else {
                changedPods.merge(kv.getKey().toStringUtf8(), after, Math::max);
            }
            pendingRevision = Math.max(pendingRevision, after);
            pending.notifyAll();
        }
    }

    @Override
    public String uid(String resource, String namespace, String name) {
        KubeResource r = resource("", resource);
        ByteString key = ByteString.copyFrom(builtIn.keyPrefix(r, namespace) + name, StandardCharsets.UTF_8);
        KeyValue kv = get(key);
        if (kv == null) {
            return null;
        }
        try {
            return uidOf(AtRest.plain(kv));
        } catch (UndecodableObjectException e) {
            // It exists; a token bound to it with a UID is then refused as recreated, not accepted blindly.
            LOG.warn("[node {}] cannot read the UID of {}: {}", nodeId, key.toStringUtf8(), e.getMessage());
            return "";
        }
    }

    @Override
    public byte[] secretToken(String namespace, String name) {
        KubeResource r = resource("", "secrets");
        ByteString key = ByteString.copyFrom(builtIn.keyPrefix(r, namespace) + name, StandardCharsets.UTF_8);
        KeyValue kv = get(key);
        if (kv == null) {
            return null;
        }
        try {
            return dataEntry(AtRest.plain(kv), "token");
        } catch (UndecodableObjectException e) {
            LOG.warn("[node {}] cannot read the token of {}: {}", nodeId, key.toStringUtf8(), e.getMessage());
            return null;
        }
    }

    /** The entry {@code name} of a stored Secret's {@code data} (protobuf: field 2, a map of bytes), or null. */
    static byte[] dataEntry(byte[] value, String name) throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, 0, value.length);
        switch (object.encoding()) {
            case PROTOBUF -> {
                try {
                    ProtoReader raw = object.typed(value);
                    while (raw.hasMore()) {
                        int tag = raw.readTag();
                        if (tag != (2 << 3 | ProtoReader.LENGTH_DELIMITED)) {
                            raw.skip(tag);
                            continue;
                        }
                        ProtoReader entry = raw.sub(raw.readLength());
                        String k = "";
                        byte[] v = new byte[0];
                        while (entry.hasMore()) {
                            int t = entry.readTag();
                            if (t == (1 << 3 | ProtoReader.LENGTH_DELIMITED)) {
                                k = entry.readString();
                            } else if (t == (2 << 3 | ProtoReader.LENGTH_DELIMITED)) {
                                v = entry.readBytes();
                            } else {
                                entry.skip(t);
                            }
                        }
                        if (k.equals(name)) {
                            return v;
                        }
                    }
                    return null;
                } catch (ProtoReader.MalformedException e) {
                    throw new UndecodableObjectException("malformed " + object.kind() + ": " + e.getMessage());
                }
            }
            case JSON -> {
                JsonElement entry = jsonField(value, "data", name);
                try {
                    return entry == null ? null : Base64.getDecoder().decode(entry.getAsString());
                } catch (IllegalArgumentException e) {
                    throw new UndecodableObjectException("data." + name + " is not base64");
                }
            }
            default -> throw new UndecodableObjectException("stored as " + object.encoding());
        }
    }

    private KeyValue get(ByteString key) {
        try {
            ListPage page = core.list(KeyRange.single(key), null, 0, 1);
            return page.kvs().isEmpty() ? null : page.kvs().get(0);
        } catch (io.watchfanout.fanout.watch.HistoryExpiredException e) {
            throw new IllegalStateException("a read at the cache's revision cannot expire", e);
        }
    }

    /** {@code metadata.uid} of a stored object (protobuf: ObjectMeta is field 1, uid its field 5). */
    static String uidOf(byte[] value) throws UndecodableObjectException {
        StoredObject object = StoredObject.of(value, 0, value.length);
        switch (object.encoding()) {
            case PROTOBUF -> {
                try {
                    ProtoReader meta = object.typed(value).lastMessage(1);
                    String uid = "";
                    while (meta != null && meta.hasMore()) {
                        int t = meta.readTag();
                        if (t == (5 << 3 | ProtoReader.LENGTH_DELIMITED)) {
                            uid = meta.readString();
                        } else {
                            meta.skip(t);
                        }
                    }
                    return uid;
                } catch (ProtoReader.MalformedException e) {
                    throw new UndecodableObjectException("malformed " + object.kind() + ": " + e.getMessage());
                }
            }
            case JSON -> {
                JsonElement uid = jsonField(value, "metadata", "uid");
                return uid == null ? "" : uid.getAsString();
            }
            default -> throw new UndecodableObjectException("stored as " + object.encoding());
        }
    }

    /** The value {@code object.field} of a stored JSON object, or null when absent or not a scalar. */
    private static JsonElement jsonField(byte[] value, String object, String field) throws UndecodableObjectException {
        try {
            JsonElement o = JsonParser.parseString(new String(value, StandardCharsets.UTF_8))
                    .getAsJsonObject()
                    .get(object);
            JsonElement f = o instanceof JsonObject m ? m.get(field) : null;
            return f == null || !f.isJsonPrimitive() ? null : f;
        } catch (RuntimeException e) {
            throw new UndecodableObjectException("malformed JSON: " + e.getMessage());
        }
    }

    /** Reads everything once, on the first use after the node serves, or after a resync. */
    void ensureRead() {
        if (readAtResync == core.status().resyncRevision()) {
            return;
        }
        synchronized (this) {
            if (readAtResync != core.status().resyncRevision()
                    && core.readiness().notServing() == null) {
                readAll();
            }
        }
    }

    /** Reads the policy and the graph from scratch. Holds the lock. */
    private void readAll() {
        readAtResync = core.status().resyncRevision();
        synchronized (pending) {
            rbacChangedAt = 0;
            changedPods.clear();
            pendingRevision = 0;
        }
        readRbac();
        Set<String> stored = new HashSet<>();
        for (StateEntry e : core.snapshot(range(pods))) {
            String key = e.kv().getKey().toStringUtf8();
            stored.add(key);
            pod(key, e.kv());
        }
        // Pods gone while the node was not following (a resync): out of the graph.
        for (String namespaceAndName : graph.podKeys()) {
            String key = builtIn.keyPrefix(pods) + namespaceAndName;
            if (!stored.contains(key)) {
                pod(key, null);
            }
        }
    }

    private KeyRange range(KubeResource r) {
        return KeyRange.prefix(ByteString.copyFrom(builtIn.keyPrefix(r), StandardCharsets.UTF_8));
    }

    /** Reads the RBAC objects again, decoding only those that changed. Holds the lock. */
    private void readRbac() {
        Map<String, List<Rbac.Rule>> clusterRoleRules = new HashMap<>();
        Map<String, List<Rbac.Rule>> roleRules = new HashMap<>();
        List<Rbac.Binding> bindings = new ArrayList<>();
        Map<String, Decoded> seen = new HashMap<>();
        for (KubeResource r : List.of(roles, clusterRoles, roleBindings, clusterRoleBindings)) {
            for (StateEntry e : core.snapshot(range(r))) {
                KeyValue kv = e.kv();
                String key = kv.getKey().toStringUtf8();
                var parsed = builtIn.parse(kv.getKey().toByteArray());
                if (parsed.isEmpty()) {
                    continue;
                }
                KubeResources.ObjectKey k = parsed.get();
                Decoded d = decoded.get(key);
                if (d == null || d.modRevision() != kv.getModRevision()) {
                    try {
                        byte[] value = AtRest.plain(kv);
                        Object v = r == roles || r == clusterRoles
                                ? RbacObjects.rules(value)
                                : RbacObjects.binding(value, k.namespace(), k.name());
                        d = new Decoded(kv.getModRevision(), v);
                    } catch (UndecodableObjectException ex) {
                        LOG.warn("[node {}] RBAC object {} is not used: {}", nodeId, key, ex.getMessage());
                        d = new Decoded(kv.getModRevision(), null);
                    }
                }
                seen.put(key, d);
                if (d.value() instanceof Rbac.Binding b) {
                    bindings.add(b);
                } else if (d.value() instanceof List<?> rules) {
                    @SuppressWarnings("unchecked")
                    List<Rbac.Rule> typed = (List<Rbac.Rule>) rules;
                    if (r == roles) {
                        roleRules.put(k.namespace() + "/" + k.name(), typed);
                    } else {
                        clusterRoleRules.put(k.name(), typed);
                    }
                }
            }
        }
        decoded.clear();
        decoded.putAll(seen);
        rbac = new Rbac(clusterRoleRules, roleRules, bindings);
    }

    /**
     * Records a pod's links in the graph from the cache's value, or its removal ({@code kv} null).
     *
     * @return true when what the pod links changed
     */
    private boolean pod(String key, KeyValue kv) {
        var parsed = builtIn.parse(key.getBytes(StandardCharsets.UTF_8));
        if (parsed.isEmpty()) {
            return false;
        }
        KubeResources.ObjectKey k = parsed.get();
        if (kv == null) {
            return graph.pod(k.namespace(), k.name(), null);
        }
        try {
            return graph.pod(k.namespace(), k.name(), PodReferences.of(AtRest.plain(kv)));
        } catch (UndecodableObjectException e) {
            LOG.warn("[node {}] pod {} is left out of the Node authorizer's graph: {}", nodeId, key, e.getMessage());
            return graph.pod(k.namespace(), k.name(), null);
        }
    }

    private void run() {
        while (!closed) {
            long await;
            try {
                synchronized (pending) {
                    if (pendingRevision == 0) {
                        pending.wait(IDLE_MILLIS);
                    }
                    await = pendingRevision;
                }
                if (await > 0 && !core.awaitRevision(await, APPLY_WAIT).reached()) {
                    // Not serving (a rebuild): the changes are read when it serves again.
                    Thread.sleep(IDLE_MILLIS);
                    continue;
                }
                if (apply(await)) {
                    onChange.run();
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("[node {}] the Kubernetes API's policy could not be read: {}", nodeId, e.toString());
            }
        }
    }

    /** Applies what changed up to {@code upTo}; true when the policy or the graph changed. */
    private synchronized boolean apply(long upTo) {
        if (core.readiness().notServing() != null) {
            return false;
        }
        boolean readPolicy;
        List<String> podKeys = new ArrayList<>();
        synchronized (pending) {
            // Only the changes the cache has applied (up to upTo); later ones wait for the next round.
            readPolicy = rbacChangedAt != 0 && rbacChangedAt <= upTo;
            if (readPolicy) {
                rbacChangedAt = 0;
            }
            long later = rbacChangedAt;
            for (var it = changedPods.entrySet().iterator(); it.hasNext(); ) {
                Map.Entry<String, Long> e = it.next();
                if (e.getValue() <= upTo) {
                    podKeys.add(e.getKey());
                    it.remove();
                } else {
                    later = Math.max(later, e.getValue());
                }
            }
            pendingRevision = later;
        }
        if (readAtResync != core.status().resyncRevision()) {
            readAll();
            return true;
        }
        if (readPolicy) {
            readRbac();
        }
        boolean linksChanged = false;
        for (String key : podKeys) {
            linksChanged |= pod(key, get(ByteString.copyFromUtf8(key)));
        }
        // A pod's status update links nothing new: the open watches are not decided again for it.
        return readPolicy || linksChanged;
    }
}

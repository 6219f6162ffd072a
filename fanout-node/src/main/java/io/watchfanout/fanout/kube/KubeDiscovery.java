package io.watchfanout.fanout.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The discovery documents of the resources a node serves, in both forms client-go reads:
 * aggregated discovery ({@code apidiscovery.k8s.io/v2} {@code APIGroupDiscoveryList}, asked for
 * first with {@code Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList})
 * and the legacy documents ({@code APIVersions} at {@code /api}, {@code APIGroupList} at
 * {@code /apis}, an {@code APIResourceList} per group version), and {@code /version}.
 *
 * <p>Every resource announces the verbs {@code get}, {@code list} and {@code watch} only: the
 * node is a read tier, and kubectl and informers look at the verbs before they ask.
 *
 * <p>Immutable and thread-safe: made once per resource table, served as bytes.
 */
public final class KubeDiscovery {
    /** The media type parameters of aggregated discovery, as client-go asks for it. */
    public static final String AGGREGATED_MEDIA_TYPE =
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

    private static final List<String> VERBS = List.of("get", "list", "watch");

    private final byte[] legacyCore;
    private final byte[] legacyGroups;
    private final byte[] aggregatedCore;
    private final byte[] aggregatedGroups;
    private final Map<String, byte[]> resourceLists = new LinkedHashMap<>();

    /** The documents of {@code resources}. */
    public KubeDiscovery(KubeResources resources) {
        Map<String, List<KubeResource>> byGroupVersion = new LinkedHashMap<>();
        for (KubeResource r : resources.all()) {
            byGroupVersion
                    .computeIfAbsent(r.apiVersion(), k -> new ArrayList<>())
                    .add(r);
        }
        JsonObject versions = new JsonObject();
        versions.addProperty("kind", "APIVersions");
        versions.add("versions", strings(List.of("v1")));
        JsonArray addresses = new JsonArray();
        JsonObject anywhere = new JsonObject();
        anywhere.addProperty("clientCIDR", "0.0.0.0/0");
        anywhere.addProperty("serverAddress", "");
        addresses.add(anywhere);
        versions.add("serverAddressByClientCIDRs", addresses);
        legacyCore = bytes(versions);

        JsonObject groupList = new JsonObject();
        groupList.addProperty("kind", "APIGroupList");
        groupList.addProperty("apiVersion", "v1");
        JsonArray groups = new JsonArray();
        JsonArray aggregated = new JsonArray();
        JsonArray aggregatedCoreItems = new JsonArray();
        for (Map.Entry<String, List<KubeResource>> gv : byGroupVersion.entrySet()) {
            KubeResource first = gv.getValue().get(0);
            resourceLists.put(gv.getKey(), bytes(resourceList(gv.getKey(), gv.getValue())));
            JsonObject item = aggregatedGroup(first.group(), first.version(), gv.getValue());
            if (first.group().isEmpty()) {
                aggregatedCoreItems.add(item);
                continue;
            }
            JsonObject group = new JsonObject();
            group.addProperty("name", first.group());
            JsonObject version = new JsonObject();
            version.addProperty("groupVersion", gv.getKey());
            version.addProperty("version", first.version());
            JsonArray groupVersions = new JsonArray();
            groupVersions.add(version);
            group.add("versions", groupVersions);
            group.add("preferredVersion", version);
            groups.add(group);
            aggregated.add(item);
        }
        groupList.add("groups", groups);
        legacyGroups = bytes(groupList);
        aggregatedCore = bytes(aggregatedList(aggregatedCoreItems));
        aggregatedGroups = bytes(aggregatedList(aggregated));
    }

    /** {@code /api}: the legacy {@code APIVersions}. */
    public byte[] legacyCore() {
        return legacyCore;
    }

    /** {@code /apis}: the legacy {@code APIGroupList}. */
    public byte[] legacyGroups() {
        return legacyGroups;
    }

    /** {@code /api} in aggregated form: the core group. */
    public byte[] aggregatedCore() {
        return aggregatedCore;
    }

    /** {@code /apis} in aggregated form: every other group. */
    public byte[] aggregatedGroups() {
        return aggregatedGroups;
    }

    /** The {@code APIResourceList} of {@code apiVersion} ({@code v1}, {@code apps/v1}), or null when not served. */
    public byte[] resourceList(String apiVersion) {
        return resourceLists.get(apiVersion);
    }

    /**
     * {@code /version}: the Kubernetes version whose API the node serves (that of its schema) and
     * the node's own build in {@code gitVersion}, so that kubectl's version skew warning stays quiet.
     */
    public static byte[] version(String nodeVersion) {
        JsonObject v = new JsonObject();
        v.addProperty("major", "1");
        v.addProperty("minor", "32");
        v.addProperty("gitVersion", "v1.32.0+watchfanout-" + nodeVersion);
        v.addProperty("gitCommit", "");
        v.addProperty("gitTreeState", "clean");
        v.addProperty("buildDate", "");
        v.addProperty("goVersion", "");
        v.addProperty("compiler", "");
        v.addProperty("platform", "linux/amd64");
        return bytes(v);
    }

    /**
     * The built-in resources kube-apiserver puts in the {@code all} category ({@code kubectl get all}):
     * group and plural.
     */
    private static final Set<String> CATEGORY_ALL = Set.of(
            "/pods",
            "/replicationcontrollers",
            "/services",
            "apps/daemonsets",
            "apps/deployments",
            "apps/replicasets",
            "apps/statefulsets",
            "autoscaling/horizontalpodautoscalers",
            "batch/cronjobs",
            "batch/jobs");

    private static boolean inCategoryAll(KubeResource r) {
        return r.printerColumns().isEmpty() && CATEGORY_ALL.contains(r.group() + "/" + r.plural());
    }

    private static JsonObject resourceList(String apiVersion, List<KubeResource> resources) {
        JsonObject list = new JsonObject();
        list.addProperty("kind", "APIResourceList");
        list.addProperty("apiVersion", "v1");
        list.addProperty("groupVersion", apiVersion);
        JsonArray items = new JsonArray();
        for (KubeResource r : resources) {
            JsonObject item = new JsonObject();
            item.addProperty("name", r.plural());
            item.addProperty("singularName", r.singular());
            item.addProperty("namespaced", r.namespaced());
            item.addProperty("kind", r.kind());
            item.add("verbs", strings(VERBS));
            if (!r.shortNames().isEmpty()) {
                item.add("shortNames", strings(r.shortNames()));
            }
            if (inCategoryAll(r)) {
                item.add("categories", strings(List.of("all")));
            }
            items.add(item);
        }
        list.add("resources", items);
        return list;
    }

    private static JsonObject aggregatedGroup(String group, String version, List<KubeResource> resources) {
        JsonObject item = new JsonObject();
        JsonObject meta = new JsonObject();
        meta.addProperty("name", group);
        item.add("metadata", meta);
        JsonObject v = new JsonObject();
        v.addProperty("version", version);
        JsonArray list = new JsonArray();
        for (KubeResource r : resources) {
            JsonObject res = new JsonObject();
            res.addProperty("resource", r.plural());
            JsonObject kind = new JsonObject();
            kind.addProperty("group", r.group());
            kind.addProperty("version", r.version());
            kind.addProperty("kind", r.kind());
            res.add("responseKind", kind);
            res.addProperty("scope", r.namespaced() ? "Namespaced" : "Cluster");
            res.addProperty("singularResource", r.singular());
            res.add("verbs", strings(VERBS));
            if (!r.shortNames().isEmpty()) {
                res.add("shortNames", strings(r.shortNames()));
            }
            if (inCategoryAll(r)) {
                res.add("categories", strings(List.of("all")));
            }
            list.add(res);
        }
        v.add("resources", list);
        v.addProperty("freshness", "Current");
        JsonArray versions = new JsonArray();
        versions.add(v);
        item.add("versions", versions);
        return item;
    }

    private static JsonObject aggregatedList(JsonArray items) {
        JsonObject list = new JsonObject();
        list.addProperty("kind", "APIGroupDiscoveryList");
        list.addProperty("apiVersion", "apidiscovery.k8s.io/v2");
        list.add("metadata", new JsonObject());
        list.add("items", items);
        return list;
    }

    private static JsonArray strings(List<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a;
    }

    private static byte[] bytes(JsonObject json) {
        return json.toString().getBytes(StandardCharsets.UTF_8);
    }
}

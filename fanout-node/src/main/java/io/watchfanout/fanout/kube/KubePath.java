package io.watchfanout.fanout.kube;

import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.util.Optional;

/**
 * What a Kubernetes API path names, as kube-apiserver's request info resolver reads it
 * (k8s.io/apiserver {@code request.RequestInfoFactory}): discovery documents, a collection
 * (across namespaces, in one namespace, or cluster-scoped), one object, or one object's
 * subresource; the legacy {@code /watch/} segment marks a watch.
 *
 * <pre>
 * /version, /api, /apis, /api/v1, /apis/{group}/{version}
 * /api/v1/{resource}[/{name}[/{subresource}]]
 * /api/v1/namespaces/{namespace}/{resource}[/{name}[/{subresource}]]
 * /apis/{group}/{version}/... likewise
 * </pre>
 *
 * @param target what the path names
 * @param apiVersion {@code v1} or {@code group/version} for everything but {@link Target#VERSION},
 *     {@link Target#CORE_GROUPS} and {@link Target#GROUPS}
 * @param resource the resource of a collection or object
 * @param namespace the namespace, empty for all namespaces or a cluster-scoped resource
 * @param name the object's name, empty for a collection
 * @param subresource the subresource ({@code status}), empty for the object itself
 * @param legacyWatch the path had kube-apiserver's deprecated {@code /watch/} segment
 */
public record KubePath(
        Target target,
        String apiVersion,
        KubeResource resource,
        String namespace,
        String name,
        String subresource,
        boolean legacyWatch) {

    /** The kinds of things a path names. */
    public enum Target {
        VERSION,
        /** {@code /api}: the core group's versions. */
        CORE_GROUPS,
        /** {@code /apis}: every other group. */
        GROUPS,
        /** {@code /api/v1}, {@code /apis/g/v}: one group version's resources. */
        RESOURCES,
        COLLECTION,
        OBJECT
    }

    /**
     * Reads {@code path} (decoded, without query) against the served {@code resources}.
     *
     * @return empty when the path names nothing the node serves (a 404 NotFound)
     */
    public static Optional<KubePath> parse(String path, KubeResources resources) {
        if (path.equals("/version") || path.equals("/version/")) {
            return Optional.of(of(Target.VERSION, ""));
        }
        String[] parts = trim(path).split("/", -1);
        for (String part : parts) {
            if (part.isEmpty()) {
                return Optional.empty();
            }
        }
        int i;
        String group;
        String version;
        if (parts[0].equals("api")) {
            if (parts.length == 1) {
                return Optional.of(of(Target.CORE_GROUPS, ""));
            }
            group = "";
            version = parts[1];
            i = 2;
        } else if (parts[0].equals("apis")) {
            if (parts.length == 1) {
                return Optional.of(of(Target.GROUPS, ""));
            }
            if (parts.length == 2) {
                return Optional.empty();
            }
            group = parts[1];
            version = parts[2];
            i = 3;
        } else {
            return Optional.empty();
        }
        String apiVersion = group.isEmpty() ? version : group + "/" + version;
        if (i == parts.length) {
            return Optional.of(of(Target.RESOURCES, apiVersion));
        }
        boolean watch = parts[i].equals("watch");
        if (watch) {
            i++;
        }
        String namespace = "";
        if (i + 2 < parts.length && parts[i].equals("namespaces")) {
            // /namespaces/{ns}/{resource}...: namespaced; /namespaces/{ns} alone is the Namespace object.
            namespace = parts[i + 1];
            i += 2;
        }
        if (i >= parts.length || parts.length - i > 3) {
            return Optional.empty();
        }
        Optional<KubeResource> resource = resources.byPlural(group, version, parts[i]);
        if (resource.isEmpty()) {
            return Optional.empty();
        }
        KubeResource r = resource.get();
        if (!namespace.isEmpty() && !r.namespaced()) {
            return Optional.empty();
        }
        String name = parts.length - i >= 2 ? parts[i + 1] : "";
        if (r.namespaced() && namespace.isEmpty() && !name.isEmpty()) {
            return Optional.empty(); // a namespaced object is named only inside its namespace
        }
        String subresource = parts.length - i == 3 ? parts[i + 2] : "";
        if (watch && !subresource.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new KubePath(
                name.isEmpty() ? Target.COLLECTION : Target.OBJECT,
                apiVersion,
                r,
                namespace,
                name,
                subresource,
                watch));
    }

    private static KubePath of(Target target, String apiVersion) {
        return new KubePath(target, apiVersion, null, "", "", "", false);
    }

    private static String trim(String path) {
        String p = path.startsWith("/") ? path.substring(1) : path;
        return p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }
}

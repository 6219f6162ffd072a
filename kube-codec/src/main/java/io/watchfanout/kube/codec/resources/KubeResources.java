package io.watchfanout.kube.codec.resources;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The built-in resources the node serves and the mapping from an etcd key to the object it holds
 * ({@code <prefix>/<storage path>/[<namespace>/]<name>}), as kube-apiserver lays them out
 * (kubernetes' {@code test/integration/etcd/data.go}, {@code ExpectedEtcdPath}).
 *
 * <p>Every GA resource whose objects kube-apiserver keeps in etcd and whose v1 schema the
 * Kubernetes protobuf artifact carries. Not served: events.k8s.io/v1 Events, which cohabit with
 * core Events under {@code events} (stored in the core schema, served converted by
 * kube-apiserver): only the core form is; APIServices ({@code apiregistration.k8s.io}), whose
 * schema the artifact lacks; and beta or alpha resources, which kube-apiserver serves only when an
 * operator enables them. Keys that map to no resource
 * ({@code compact_rev_key}, {@code masterleases/…}, {@code ranges/…}) map to nothing.
 *
 * <p>Immutable and thread-safe.
 */
public final class KubeResources {
    private static final Set<String> NONE = Set.of();

    private static final List<KubeResource> BUILT_IN = List.of(
            core(
                    "Pod",
                    "pods",
                    true,
                    "pods",
                    List.of("po"),
                    Set.of(
                            "spec.nodeName",
                            "spec.restartPolicy",
                            "spec.schedulerName",
                            "spec.serviceAccountName",
                            "spec.hostNetwork",
                            "status.phase",
                            "status.podIP",
                            "status.nominatedNodeName")),
            core("Node", "nodes", false, "minions", List.of("no"), Set.of("spec.unschedulable")),
            core("Service", "services", true, "services/specs", List.of("svc"), Set.of("spec.clusterIP", "spec.type")),
            core("Endpoints", "endpoints", true, "services/endpoints", List.of("ep"), NONE),
            core("Namespace", "namespaces", false, "namespaces", List.of("ns"), Set.of("status.phase")),
            core("ConfigMap", "configmaps", true, "configmaps", List.of("cm"), NONE),
            core("Secret", "secrets", true, "secrets", List.of(), Set.of("type")),
            core("ServiceAccount", "serviceaccounts", true, "serviceaccounts", List.of("sa"), NONE),
            core(
                    "Event",
                    "events",
                    true,
                    "events",
                    List.of("ev"),
                    Set.of(
                            "involvedObject.kind",
                            "involvedObject.namespace",
                            "involvedObject.name",
                            "involvedObject.uid",
                            "involvedObject.apiVersion",
                            "involvedObject.resourceVersion",
                            "involvedObject.fieldPath",
                            "reason",
                            "reportingComponent",
                            "source",
                            "type")),
            core("PersistentVolume", "persistentvolumes", false, "persistentvolumes", List.of("pv"), NONE),
            core(
                    "PersistentVolumeClaim",
                    "persistentvolumeclaims",
                    true,
                    "persistentvolumeclaims",
                    List.of("pvc"),
                    NONE),
            core(
                    "ReplicationController",
                    "replicationcontrollers",
                    true,
                    "controllers",
                    List.of("rc"),
                    Set.of("status.replicas")),
            core("LimitRange", "limitranges", true, "limitranges", List.of("limits"), NONE),
            core("ResourceQuota", "resourcequotas", true, "resourcequotas", List.of("quota"), NONE),
            core("PodTemplate", "podtemplates", true, "podtemplates", List.of(), NONE),
            of("apps", "Deployment", "deployments", true, "deployments", List.of("deploy"), NONE),
            of("apps", "ReplicaSet", "replicasets", true, "replicasets", List.of("rs"), Set.of("status.replicas")),
            of("apps", "StatefulSet", "statefulsets", true, "statefulsets", List.of("sts"), NONE),
            of("apps", "DaemonSet", "daemonsets", true, "daemonsets", List.of("ds"), NONE),
            of("apps", "ControllerRevision", "controllerrevisions", true, "controllerrevisions", List.of(), NONE),
            of("batch", "Job", "jobs", true, "jobs", List.of(), Set.of("status.successful")),
            of("batch", "CronJob", "cronjobs", true, "cronjobs", List.of("cj"), NONE),
            of("coordination.k8s.io", "Lease", "leases", true, "leases", List.of(), NONE),
            of("discovery.k8s.io", "EndpointSlice", "endpointslices", true, "endpointslices", List.of(), NONE),
            of("networking.k8s.io", "Ingress", "ingresses", true, "ingress", List.of("ing"), NONE),
            of(
                    "networking.k8s.io",
                    "NetworkPolicy",
                    "networkpolicies",
                    true,
                    "networkpolicies",
                    List.of("netpol"),
                    NONE),
            of("networking.k8s.io", "IngressClass", "ingressclasses", false, "ingressclasses", List.of(), NONE),
            of("rbac.authorization.k8s.io", "Role", "roles", true, "roles", List.of(), NONE),
            of("rbac.authorization.k8s.io", "RoleBinding", "rolebindings", true, "rolebindings", List.of(), NONE),
            of("rbac.authorization.k8s.io", "ClusterRole", "clusterroles", false, "clusterroles", List.of(), NONE),
            of(
                    "rbac.authorization.k8s.io",
                    "ClusterRoleBinding",
                    "clusterrolebindings",
                    false,
                    "clusterrolebindings",
                    List.of(),
                    NONE),
            of(
                    "policy",
                    "PodDisruptionBudget",
                    "poddisruptionbudgets",
                    true,
                    "poddisruptionbudgets",
                    List.of("pdb"),
                    NONE),
            of("storage.k8s.io", "StorageClass", "storageclasses", false, "storageclasses", List.of("sc"), NONE),
            of("storage.k8s.io", "CSIDriver", "csidrivers", false, "csidrivers", List.of(), NONE),
            of("storage.k8s.io", "CSINode", "csinodes", false, "csinodes", List.of(), NONE),
            of("storage.k8s.io", "VolumeAttachment", "volumeattachments", false, "volumeattachments", List.of(), NONE),
            resource(
                    "autoscaling",
                    "v2",
                    "HorizontalPodAutoscaler",
                    "horizontalpodautoscalers",
                    true,
                    "horizontalpodautoscalers",
                    List.of("hpa"),
                    NONE),
            of("scheduling.k8s.io", "PriorityClass", "priorityclasses", false, "priorityclasses", List.of("pc"), NONE),
            of("node.k8s.io", "RuntimeClass", "runtimeclasses", false, "runtimeclasses", List.of(), NONE),
            of(
                    "certificates.k8s.io",
                    "CertificateSigningRequest",
                    "certificatesigningrequests",
                    false,
                    "certificatesigningrequests",
                    List.of("csr"),
                    Set.of("spec.signerName")),
            of(
                    "admissionregistration.k8s.io",
                    "MutatingWebhookConfiguration",
                    "mutatingwebhookconfigurations",
                    false,
                    "mutatingwebhookconfigurations",
                    List.of(),
                    NONE),
            of(
                    "admissionregistration.k8s.io",
                    "ValidatingWebhookConfiguration",
                    "validatingwebhookconfigurations",
                    false,
                    "validatingwebhookconfigurations",
                    List.of(),
                    NONE),
            of(
                    "admissionregistration.k8s.io",
                    "ValidatingAdmissionPolicy",
                    "validatingadmissionpolicies",
                    false,
                    "validatingadmissionpolicies",
                    List.of(),
                    NONE),
            of(
                    "admissionregistration.k8s.io",
                    "ValidatingAdmissionPolicyBinding",
                    "validatingadmissionpolicybindings",
                    false,
                    "validatingadmissionpolicybindings",
                    List.of(),
                    NONE),
            of(
                    "admissionregistration.k8s.io",
                    "MutatingAdmissionPolicy",
                    "mutatingadmissionpolicies",
                    false,
                    "mutatingadmissionpolicies",
                    List.of(),
                    NONE),
            of(
                    "admissionregistration.k8s.io",
                    "MutatingAdmissionPolicyBinding",
                    "mutatingadmissionpolicybindings",
                    false,
                    "mutatingadmissionpolicybindings",
                    List.of(),
                    NONE),
            of("flowcontrol.apiserver.k8s.io", "FlowSchema", "flowschemas", false, "flowschemas", List.of(), NONE),
            of(
                    "flowcontrol.apiserver.k8s.io",
                    "PriorityLevelConfiguration",
                    "prioritylevelconfigurations",
                    false,
                    "prioritylevelconfigurations",
                    List.of(),
                    NONE),
            of("networking.k8s.io", "IPAddress", "ipaddresses", false, "ipaddresses", List.of("ip"), NONE),
            of("networking.k8s.io", "ServiceCIDR", "servicecidrs", false, "servicecidrs", List.of(), NONE),
            of(
                    "storage.k8s.io",
                    "CSIStorageCapacity",
                    "csistoragecapacities",
                    true,
                    "csistoragecapacities",
                    List.of(),
                    NONE),
            of(
                    "storage.k8s.io",
                    "VolumeAttributesClass",
                    "volumeattributesclasses",
                    false,
                    "volumeattributesclasses",
                    List.of("vac"),
                    NONE),
            of("resource.k8s.io", "DeviceClass", "deviceclasses", false, "deviceclasses", List.of(), NONE),
            of("resource.k8s.io", "ResourceClaim", "resourceclaims", true, "resourceclaims", List.of(), NONE),
            of(
                    "resource.k8s.io",
                    "ResourceClaimTemplate",
                    "resourceclaimtemplates",
                    true,
                    "resourceclaimtemplates",
                    List.of(),
                    NONE),
            of(
                    "resource.k8s.io",
                    "ResourceSlice",
                    "resourceslices",
                    false,
                    "resourceslices",
                    List.of(),
                    Set.of("spec.nodeName", "spec.driver")),
            of(
                    "apiextensions.k8s.io",
                    "CustomResourceDefinition",
                    "customresourcedefinitions",
                    false,
                    "apiextensions.k8s.io/customresourcedefinitions",
                    List.of("crd", "crds"),
                    NONE));

    private final String prefix;
    private final List<KubeResource> resources;
    private final Map<String, KubeResource> byStoragePath = new HashMap<>();

    private KubeResources(String prefix, List<KubeResource> resources) {
        this.prefix = prefix.endsWith("/") ? prefix : prefix + "/";
        this.resources = List.copyOf(resources);
        for (KubeResource r : this.resources) {
            byStoragePath.put(r.storagePath(), r);
        }
    }

    /**
     * The built-in resources under the etcd prefix {@code prefix} (kube-apiserver's
     * {@code --etcd-prefix}, {@code /registry} by default).
     */
    public static KubeResources builtIn(String prefix) {
        return new KubeResources(prefix, BUILT_IN);
    }

    /** The same table with {@code more} resources (custom resources from the stored CRDs) added. */
    public KubeResources with(List<KubeResource> more) {
        List<KubeResource> all = new ArrayList<>(resources);
        all.addAll(more);
        return new KubeResources(prefix, all);
    }

    /** Every resource, built-ins first, in a stable order. */
    public List<KubeResource> all() {
        return resources;
    }

    /** The resource served at {@code group}/{@code version} under the path name {@code plural}. */
    public Optional<KubeResource> byPlural(String group, String version, String plural) {
        for (KubeResource r : resources) {
            if (r.group().equals(group)
                    && r.version().equals(version)
                    && r.plural().equals(plural)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    /** The etcd key prefix of all objects of {@code resource}, with its trailing slash. */
    public String keyPrefix(KubeResource resource) {
        return prefix + resource.storagePath() + "/";
    }

    /** The etcd key prefix of {@code resource}'s objects in {@code namespace}, with its trailing slash. */
    public String keyPrefix(KubeResource resource, String namespace) {
        return keyPrefix(resource) + namespace + "/";
    }

    /**
     * The object an etcd key holds, or empty for a key outside the prefix, of no served resource,
     * or without the namespace a namespaced resource needs.
     */
    public Optional<ObjectKey> parse(byte[] key) {
        String k = new String(key, StandardCharsets.UTF_8);
        if (!k.startsWith(prefix)) {
            return Optional.empty();
        }
        String rest = k.substring(prefix.length());
        int first = rest.indexOf('/');
        if (first <= 0) {
            return Optional.empty();
        }
        int second = rest.indexOf('/', first + 1);
        if (second > 0) {
            KubeResource twoSegments = byStoragePath.get(rest.substring(0, second));
            if (twoSegments != null) {
                return objectKey(twoSegments, rest.substring(second + 1));
            }
        }
        KubeResource oneSegment = byStoragePath.get(rest.substring(0, first));
        return oneSegment == null ? Optional.empty() : objectKey(oneSegment, rest.substring(first + 1));
    }

    private static Optional<ObjectKey> objectKey(KubeResource resource, String path) {
        int slash = path.indexOf('/');
        if (resource.namespaced()) {
            if (slash <= 0 || slash == path.length() - 1 || path.indexOf('/', slash + 1) >= 0) {
                return Optional.empty();
            }
            return Optional.of(new ObjectKey(resource, path.substring(0, slash), path.substring(slash + 1)));
        }
        if (slash >= 0 || path.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new ObjectKey(resource, "", path));
    }

    /** One object's identity as its key gives it; {@code namespace} is empty for cluster-scoped ones. */
    public record ObjectKey(KubeResource resource, String namespace, String name) {}

    private static KubeResource core(
            String kind,
            String plural,
            boolean namespaced,
            String storagePath,
            List<String> shortNames,
            Set<String> fieldSelectors) {
        return resource("", "v1", kind, plural, namespaced, storagePath, shortNames, fieldSelectors);
    }

    private static KubeResource of(
            String group,
            String kind,
            String plural,
            boolean namespaced,
            String storagePath,
            List<String> shortNames,
            Set<String> fieldSelectors) {
        return resource(group, "v1", kind, plural, namespaced, storagePath, shortNames, fieldSelectors);
    }

    private static KubeResource resource(
            String group,
            String version,
            String kind,
            String plural,
            boolean namespaced,
            String storagePath,
            List<String> shortNames,
            Set<String> fieldSelectors) {
        return new KubeResource(
                group,
                version,
                kind,
                plural,
                kind.toLowerCase(Locale.ROOT),
                shortNames,
                namespaced,
                storagePath,
                fieldSelectors,
                List.of());
    }
}

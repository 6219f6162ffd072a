package io.watchfanout.localstack.demo;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;

/**
 * Kubernetes-like objects as JSON documents, shaped after what kube-apiserver keeps under
 * {@code /registry/...}: pods (~3–4 KB: labels, owner references, managed fields, two
 * containers with probes and environment, status conditions), config maps (1–6 KB of data),
 * deployments and replica sets (~2 KB), node leases and events (~0.7 KB).
 *
 * <p>Stateless; thread-safe given a per-thread {@link Random}.
 */
final class KubeObjects {
    private KubeObjects() {}

    /** The state of one demo pod that its document is rendered from. */
    static final class Pod {
        final String namespace;
        final String app;
        final String templateHash;
        final String name;
        final String uid = UUID.randomUUID().toString();
        final String node;
        final Instant created = now();
        final int ipSuffix;
        String phase = "Pending";
        boolean ready;
        int restarts;
        Instant started;

        Pod(String namespace, String app, String templateHash, String name, String node, int ipSuffix) {
            this.namespace = namespace;
            this.app = app;
            this.templateHash = templateHash;
            this.name = name;
            this.node = node;
            this.ipSuffix = ipSuffix;
        }

        String key() {
            return "/registry/pods/" + namespace + "/" + name;
        }
    }

    static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS);
    }

    static String pod(Pod p) {
        String image = "registry.example.com/" + p.namespace + "/" + p.app + ":1." + (p.templateHash.charAt(0) % 7)
                + "." + (p.templateHash.charAt(1) % 10);
        Json j = new Json().beginObject().field("kind", "Pod").field("apiVersion", "v1");
        j.name("metadata")
                .beginObject()
                .field("name", p.name)
                .field("generateName", p.app + "-" + p.templateHash + "-")
                .field("namespace", p.namespace)
                .field("uid", p.uid)
                .field("creationTimestamp", p.created.toString());
        j.name("labels")
                .beginObject()
                .field("app", p.app)
                .field("pod-template-hash", p.templateHash)
                .field("app.kubernetes.io/part-of", "shop")
                .field("tier", p.app.equals("web") ? "frontend" : "backend")
                .endObject();
        j.name("annotations")
                .beginObject()
                .field("prometheus.io/scrape", "true")
                .field("prometheus.io/port", "9090")
                .field("kubectl.kubernetes.io/default-container", p.app)
                .endObject();
        j.name("ownerReferences")
                .beginArray()
                .beginObject()
                .field("apiVersion", "apps/v1")
                .field("kind", "ReplicaSet")
                .field("name", p.app + "-" + p.templateHash)
                .field("uid", uuidFrom(p.namespace + p.app + p.templateHash))
                .field("controller", true)
                .field("blockOwnerDeletion", true)
                .endObject()
                .endArray();
        managedFields(
                j,
                "kube-controller-manager",
                p.created,
                "{\"f:metadata\":{\"f:generateName\":{},\"f:labels\":{"
                        + "\".\":{},\"f:app\":{},\"f:pod-template-hash\":{}},\"f:ownerReferences\":{}},\"f:spec\":{\"f:containers\":"
                        + "{\"k:{\\\"name\\\":\\\"" + p.app
                        + "\\\"}\":{\".\":{},\"f:env\":{},\"f:image\":{},\"f:name\":{},"
                        + "\"f:ports\":{},\"f:resources\":{}}},\"f:restartPolicy\":{}}}");
        j.endObject();

        j.name("spec").beginObject();
        j.name("volumes")
                .beginArray()
                .beginObject()
                .field("name", "config")
                .name("configMap")
                .beginObject()
                .field("name", p.app + "-config")
                .field("defaultMode", 420)
                .endObject()
                .endObject()
                .beginObject()
                .field("name", "kube-api-access")
                .name("projected")
                .beginObject()
                .name("sources")
                .beginArray()
                .beginObject()
                .name("serviceAccountToken")
                .beginObject()
                .field("expirationSeconds", 3607)
                .field("path", "token")
                .endObject()
                .endObject()
                .beginObject()
                .name("configMap")
                .beginObject()
                .field("name", "kube-root-ca.crt")
                .endObject()
                .endObject()
                .endArray()
                .field("defaultMode", 420)
                .endObject()
                .endObject()
                .endArray();
        j.name("containers").beginArray();
        container(
                j,
                p.app,
                image,
                8080,
                List.of(
                        "LOG_LEVEL=info",
                        "PORT=8080",
                        "OTEL_SERVICE_NAME=" + p.app,
                        "DB_HOST=postgres." + p.namespace + ".svc.cluster.local",
                        "CACHE_TTL=30s"),
                "250m",
                "256Mi");
        container(
                j,
                "envoy",
                "docker.io/envoyproxy/envoy:v1.30.1",
                9901,
                List.of("ENVOY_UID=0", "ENVOY_LOG_LEVEL=warn"),
                "100m",
                "128Mi");
        j.endArray();
        j.field("restartPolicy", "Always")
                .field("terminationGracePeriodSeconds", 30)
                .field("dnsPolicy", "ClusterFirst")
                .field("serviceAccountName", "default")
                .field("nodeName", p.node)
                .field("schedulerName", "default-scheduler")
                .field("priority", 0)
                .field("enableServiceLinks", true)
                .field("preemptionPolicy", "PreemptLowerPriority");
        j.name("tolerations")
                .beginArray()
                .beginObject()
                .field("key", "node.kubernetes.io/not-ready")
                .field("operator", "Exists")
                .field("effect", "NoExecute")
                .field("tolerationSeconds", 300)
                .endObject()
                .beginObject()
                .field("key", "node.kubernetes.io/unreachable")
                .field("operator", "Exists")
                .field("effect", "NoExecute")
                .field("tolerationSeconds", 300)
                .endObject()
                .endArray();
        j.endObject();

        j.name("status").beginObject().field("phase", p.phase);
        j.name("conditions").beginArray();
        condition(j, "PodScheduled", true, p.created);
        condition(j, "Initialized", p.started != null, p.started != null ? p.started : p.created);
        condition(j, "ContainersReady", p.ready, p.started != null ? p.started : p.created);
        condition(j, "Ready", p.ready, p.started != null ? p.started : p.created);
        j.endArray();
        j.field("hostIP", "10.0.0." + (10 + Math.floorMod(p.node.hashCode(), 50)))
                .field("podIP", "10.244." + (p.ipSuffix / 250) + "." + (p.ipSuffix % 250 + 2));
        if (p.started != null) {
            j.field("startTime", p.started.toString());
            j.name("containerStatuses").beginArray();
            containerStatus(j, p.app, image, p);
            containerStatus(j, "envoy", "docker.io/envoyproxy/envoy:v1.30.1", p);
            j.endArray();
        }
        j.field("qosClass", "Burstable").endObject();
        return j.endObject().toString();
    }

    private static void container(
            Json j, String name, String image, int port, List<String> env, String cpu, String memory) {
        j.beginObject().field("name", name).field("image", image);
        j.name("ports")
                .beginArray()
                .beginObject()
                .field("name", "http")
                .field("containerPort", port)
                .field("protocol", "TCP")
                .endObject()
                .endArray();
        j.name("env").beginArray();
        for (String e : env) {
            int eq = e.indexOf('=');
            j.beginObject()
                    .field("name", e.substring(0, eq))
                    .field("value", e.substring(eq + 1))
                    .endObject();
        }
        j.endArray();
        j.name("resources")
                .beginObject()
                .name("limits")
                .beginObject()
                .field("cpu", Integer.parseInt(cpu.replace("m", "")) * 2 + "m")
                .field("memory", memory)
                .endObject()
                .name("requests")
                .beginObject()
                .field("cpu", cpu)
                .field("memory", memory)
                .endObject()
                .endObject();
        j.name("volumeMounts")
                .beginArray()
                .beginObject()
                .field("name", "config")
                .field("readOnly", true)
                .field("mountPath", "/etc/" + name)
                .endObject()
                .beginObject()
                .field("name", "kube-api-access")
                .field("readOnly", true)
                .field("mountPath", "/var/run/secrets/kubernetes.io/serviceaccount")
                .endObject()
                .endArray();
        for (String probe : List.of("livenessProbe", "readinessProbe")) {
            j.name(probe)
                    .beginObject()
                    .name("httpGet")
                    .beginObject()
                    .field("path", probe.startsWith("live") ? "/healthz" : "/ready")
                    .field("port", port)
                    .field("scheme", "HTTP")
                    .endObject()
                    .field("initialDelaySeconds", 5)
                    .field("timeoutSeconds", 1)
                    .field("periodSeconds", 10)
                    .field("successThreshold", 1)
                    .field("failureThreshold", 3)
                    .endObject();
        }
        j.field("terminationMessagePath", "/dev/termination-log")
                .field("terminationMessagePolicy", "File")
                .field("imagePullPolicy", "IfNotPresent")
                .endObject();
    }

    private static void condition(Json j, String type, boolean status, Instant at) {
        j.beginObject()
                .field("type", type)
                .field("status", status ? "True" : "False")
                .name("lastProbeTime")
                .raw("null")
                .field("lastTransitionTime", at.toString())
                .endObject();
    }

    private static void containerStatus(Json j, String name, String image, KubeObjects.Pod p) {
        j.beginObject().field("name", name);
        j.name("state").beginObject().name(p.ready ? "running" : "waiting").beginObject();
        if (p.ready) {
            j.field("startedAt", p.started.toString());
        } else {
            j.field("reason", p.restarts > 0 ? "CrashLoopBackOff" : "ContainerCreating");
        }
        j.endObject().endObject();
        j.name("lastState").beginObject();
        if (p.restarts > 0) {
            j.name("terminated")
                    .beginObject()
                    .field("exitCode", 137)
                    .field("reason", "OOMKilled")
                    .field("finishedAt", p.started.toString())
                    .endObject();
        }
        j.endObject();
        j.field("ready", p.ready)
                .field("restartCount", p.restarts)
                .field("image", image)
                .field("imageID", image.replaceAll(":[^:/]+$", "") + "@sha256:" + hex(p.uid + name, 64))
                .field("containerID", "containerd://" + hex(p.uid + name + p.restarts, 64))
                .field("started", p.ready)
                .endObject();
    }

    private static void managedFields(Json j, String manager, Instant time, String fieldsV1) {
        j.name("managedFields")
                .beginArray()
                .beginObject()
                .field("manager", manager)
                .field("operation", "Update")
                .field("apiVersion", "v1")
                .field("time", time.toString())
                .field("fieldsType", "FieldsV1")
                .name("fieldsV1")
                .raw(fieldsV1)
                .endObject()
                .endArray();
    }

    static String configMap(String namespace, String name, int revision, Random random) {
        Json j = new Json().beginObject().field("kind", "ConfigMap").field("apiVersion", "v1");
        j.name("metadata")
                .beginObject()
                .field("name", name)
                .field("namespace", namespace)
                .field("uid", uuidFrom(namespace + name))
                .field("creationTimestamp", now().toString())
                .name("labels")
                .beginObject()
                .field("app.kubernetes.io/managed-by", "Helm")
                .field("revision", Integer.toString(revision))
                .endObject()
                .endObject();
        j.name("data").beginObject();
        StringBuilder props = new StringBuilder();
        int lines = 20 + random.nextInt(120);
        for (int i = 0; i < lines; i++) {
            props.append(String.format(Locale.ROOT, "%s.setting.%03d=%s%n", name, i, hex(name + revision + i, 16)));
        }
        j.field("application.properties", props.toString());
        j.field("log-level", random.nextBoolean() ? "info" : "debug");
        j.field(
                "feature-flags.yaml",
                "checkout:\n  newFlow: " + random.nextBoolean() + "\n  rollout: " + random.nextInt(100)
                        + "%\nsearch:\n  fuzzy: true\n");
        j.endObject();
        return j.endObject().toString();
    }

    static String deployment(String namespace, String app, String templateHash, int generation, int replicas) {
        Json j = new Json().beginObject().field("kind", "Deployment").field("apiVersion", "apps/v1");
        j.name("metadata")
                .beginObject()
                .field("name", app)
                .field("namespace", namespace)
                .field("uid", uuidFrom(namespace + app))
                .field("generation", generation)
                .field("creationTimestamp", now().toString())
                .name("annotations")
                .beginObject()
                .field("deployment.kubernetes.io/revision", Integer.toString(generation))
                .endObject()
                .name("labels")
                .beginObject()
                .field("app", app)
                .endObject()
                .endObject();
        j.name("spec")
                .beginObject()
                .field("replicas", replicas)
                .name("selector")
                .beginObject()
                .name("matchLabels")
                .beginObject()
                .field("app", app)
                .endObject()
                .endObject()
                .name("strategy")
                .beginObject()
                .field("type", "RollingUpdate")
                .name("rollingUpdate")
                .beginObject()
                .field("maxUnavailable", "25%")
                .field("maxSurge", "25%")
                .endObject()
                .endObject()
                .name("template")
                .beginObject()
                .name("metadata")
                .beginObject()
                .name("labels")
                .beginObject()
                .field("app", app)
                .endObject()
                .endObject()
                .name("spec")
                .beginObject()
                .name("containers")
                .beginArray()
                .beginObject()
                .field("name", app)
                .field(
                        "image",
                        "registry.example.com/" + namespace + "/" + app + ":1." + (templateHash.charAt(0) % 7) + "."
                                + (templateHash.charAt(1) % 10))
                .endObject()
                .endArray()
                .endObject()
                .endObject()
                .field("revisionHistoryLimit", 10)
                .field("progressDeadlineSeconds", 600)
                .endObject();
        j.name("status")
                .beginObject()
                .field("observedGeneration", generation)
                .field("replicas", replicas)
                .field("updatedReplicas", 0)
                .field("readyReplicas", replicas)
                .field("availableReplicas", replicas)
                .name("conditions")
                .beginArray()
                .beginObject()
                .field("type", "Progressing")
                .field("status", "True")
                .field("reason", "NewReplicaSetCreated")
                .field("message", "Created new replica set \"" + app + "-" + templateHash + "\"")
                .endObject()
                .endArray()
                .endObject();
        return j.endObject().toString();
    }

    static String replicaSet(String namespace, String app, String templateHash, int generation, int replicas) {
        Json j = new Json().beginObject().field("kind", "ReplicaSet").field("apiVersion", "apps/v1");
        j.name("metadata")
                .beginObject()
                .field("name", app + "-" + templateHash)
                .field("namespace", namespace)
                .field("uid", uuidFrom(namespace + app + templateHash))
                .field("generation", generation)
                .field("creationTimestamp", now().toString())
                .name("labels")
                .beginObject()
                .field("app", app)
                .field("pod-template-hash", templateHash)
                .endObject()
                .name("ownerReferences")
                .beginArray()
                .beginObject()
                .field("apiVersion", "apps/v1")
                .field("kind", "Deployment")
                .field("name", app)
                .field("uid", uuidFrom(namespace + app))
                .field("controller", true)
                .field("blockOwnerDeletion", true)
                .endObject()
                .endArray()
                .endObject();
        j.name("spec")
                .beginObject()
                .field("replicas", replicas)
                .name("selector")
                .beginObject()
                .name("matchLabels")
                .beginObject()
                .field("app", app)
                .field("pod-template-hash", templateHash)
                .endObject()
                .endObject()
                .endObject();
        j.name("status")
                .beginObject()
                .field("replicas", replicas)
                .field("readyReplicas", replicas)
                .field("observedGeneration", generation)
                .endObject();
        return j.endObject().toString();
    }

    static String nodeLease(String node, Instant renewTime) {
        Json j = new Json().beginObject().field("kind", "Lease").field("apiVersion", "coordination.k8s.io/v1");
        j.name("metadata")
                .beginObject()
                .field("name", node)
                .field("namespace", "kube-node-lease")
                .field("uid", uuidFrom("lease" + node))
                .field("creationTimestamp", "2025-01-01T00:00:00Z")
                .name("ownerReferences")
                .beginArray()
                .beginObject()
                .field("apiVersion", "v1")
                .field("kind", "Node")
                .field("name", node)
                .field("uid", uuidFrom("node" + node))
                .endObject()
                .endArray();
        managedFields(
                j,
                "kubelet",
                renewTime,
                "{\"f:spec\":{\"f:holderIdentity\":{},\"f:leaseDurationSeconds\":{}," + "\"f:renewTime\":{}}}");
        j.endObject();
        j.name("spec")
                .beginObject()
                .field("holderIdentity", node)
                .field("leaseDurationSeconds", 40)
                .field("renewTime", renewTime.toString().replace("Z", ".000000Z"))
                .endObject();
        return j.endObject().toString();
    }

    static String event(String namespace, String name, Pod involved, String reason, String message, String type) {
        Instant t = now();
        Json j = new Json().beginObject().field("kind", "Event").field("apiVersion", "v1");
        j.name("metadata")
                .beginObject()
                .field("name", name)
                .field("namespace", namespace)
                .field("uid", UUID.randomUUID().toString())
                .field("creationTimestamp", t.toString())
                .endObject();
        j.name("involvedObject")
                .beginObject()
                .field("kind", "Pod")
                .field("namespace", namespace)
                .field("name", involved.name)
                .field("uid", involved.uid)
                .field("apiVersion", "v1")
                .field("fieldPath", "spec.containers{" + involved.app + "}")
                .endObject();
        j.field("reason", reason)
                .field("message", message)
                .name("source")
                .beginObject()
                .field("component", "kubelet")
                .field("host", involved.node)
                .endObject()
                .field("firstTimestamp", t.toString())
                .field("lastTimestamp", t.toString())
                .field("count", 1)
                .field("type", type)
                .field("eventTime", t.toString().replace("Z", ".000000Z"))
                .field("reportingComponent", "kubelet")
                .field("reportingInstance", involved.node);
        return j.endObject().toString();
    }

    /** A stable UUID-shaped id derived from {@code seed}. */
    static String uuidFrom(String seed) {
        return UUID.nameUUIDFromBytes(seed.getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .toString();
    }

    /** {@code length} hex digits derived from {@code seed} (stable). */
    static String hex(String seed, int length) {
        StringBuilder s = new StringBuilder(length);
        long h = seed.hashCode() * 0x9E3779B97F4A7C15L;
        while (s.length() < length) {
            h ^= h >>> 29;
            h *= 0xBF58476D1CE4E5B9L;
            h ^= h >>> 32;
            s.append(String.format(Locale.ROOT, "%016x", h));
        }
        return s.substring(0, length);
    }

    /** A random lower-case alphanumeric suffix like Kubernetes' generated names ({@code x2k9p}). */
    static String suffix(Random random, int length) {
        String alphabet = "bcdfghjklmnpqrstvwxz2456789";
        StringBuilder s = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            s.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return s.toString();
    }
}

package io.watchfanout.localstack.demo;

import com.google.protobuf.ByteString;
import io.kubernetes.client.proto.IntStr;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Resource;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Apps;
import io.kubernetes.client.proto.V1Coordination;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;

/**
 * Built-in Kubernetes objects as kube-apiserver stores them under {@code /registry/...}:
 * protobuf envelopes ({@link StorageEnvelope}) of the messages of
 * {@code io.kubernetes:client-java-proto}, shaped after real ones: pods (~3–5 KB: labels,
 * owner references, the controller's and the kubelet's managed fields, two containers with
 * probes and environment, status conditions and container statuses), config maps (1–6 KB of
 * data), deployments and replica sets, nodes, namespaces, node leases and events. As
 * kube-apiserver writes them, {@code metadata.resourceVersion} is stored empty (it is the key's
 * mod revision on read) and times have whole seconds ({@code MicroTime}s microseconds).
 *
 * <p>Stateless; thread-safe given a per-thread {@link Random}.
 */
final class DemoObjects {
    /**
     * The deployments' {@code spec.revisionHistoryLimit}: how many old replica sets (scaled to
     * 0) the deployment controller keeps; it deletes the oldest beyond it.
     */
    static final int REVISION_HISTORY_LIMIT = 10;

    private DemoObjects() {}

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

    // ---- pods ------------------------------------------------------------------------------

    /** The stored value of the pod {@code p} in its current state. */
    static byte[] pod(Pod p) {
        String image = image(p.namespace, p.app, p.templateHash);
        Instant since = p.started != null ? p.started : p.created;
        Meta.ObjectMeta.Builder meta = meta(p.name, p.namespace, p.uid, p.created)
                .setGenerateName(p.app + "-" + p.templateHash + "-")
                .putLabels("app", p.app)
                .putLabels("pod-template-hash", p.templateHash)
                .putLabels("app.kubernetes.io/part-of", "shop")
                .putLabels("tier", p.app.equals("web") ? "frontend" : "backend")
                .putAnnotations("prometheus.io/scrape", "true")
                .putAnnotations("prometheus.io/port", "9090")
                .putAnnotations("kubectl.kubernetes.io/default-container", p.app)
                .addOwnerReferences(ownerReference(
                        "apps/v1",
                        "ReplicaSet",
                        p.app + "-" + p.templateHash,
                        uuidFrom(p.namespace + p.app + p.templateHash)))
                .addManagedFields(managedFields(
                        "kube-controller-manager",
                        "v1",
                        p.created,
                        "",
                        "{\"f:metadata\":{\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},"
                                + "\"f:pod-template-hash\":{}},\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\""
                                + uuidFrom(p.namespace + p.app + p.templateHash) + "\\\"}\":{}}},\"f:spec\":{"
                                + "\"f:containers\":{\"k:{\\\"name\\\":\\\"" + p.app + "\\\"}\":{\".\":{},\"f:env\":{},"
                                + "\"f:image\":{},\"f:imagePullPolicy\":{},\"f:livenessProbe\":{},\"f:name\":{},"
                                + "\"f:ports\":{},\"f:readinessProbe\":{},\"f:resources\":{},\"f:volumeMounts\":{}},"
                                + "\"k:{\\\"name\\\":\\\"envoy\\\"}\":{\".\":{},\"f:env\":{},\"f:image\":{},"
                                + "\"f:name\":{},\"f:ports\":{},\"f:resources\":{}}},\"f:dnsPolicy\":{},"
                                + "\"f:enableServiceLinks\":{},\"f:restartPolicy\":{},\"f:schedulerName\":{},"
                                + "\"f:terminationGracePeriodSeconds\":{},\"f:volumes\":{}}}"));
        if (p.started != null) {
            meta.addManagedFields(managedFields(
                    "kubelet",
                    "v1",
                    since,
                    "status",
                    "{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"ContainersReady\\\"}\":{\".\":{},"
                            + "\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}},"
                            + "\"k:{\\\"type\\\":\\\"Initialized\\\"}\":{\".\":{},\"f:lastProbeTime\":{},"
                            + "\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}},"
                            + "\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{},\"f:lastProbeTime\":{},"
                            + "\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}}},"
                            + "\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},\"f:phase\":{},"
                            + "\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"" + podIp(p)
                            + "\\\"}\":{\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}}"));
        }

        V1.PodSpec.Builder spec = V1.PodSpec.newBuilder()
                .addVolumes(V1.Volume.newBuilder()
                        .setName("config")
                        .setVolumeSource(V1.VolumeSource.newBuilder()
                                .setConfigMap(V1.ConfigMapVolumeSource.newBuilder()
                                        .setLocalObjectReference(localObject(p.app + "-config"))
                                        .setDefaultMode(420))))
                .addVolumes(V1.Volume.newBuilder()
                        .setName("kube-api-access-" + p.name.substring(p.name.length() - 5))
                        .setVolumeSource(V1.VolumeSource.newBuilder()
                                .setProjected(V1.ProjectedVolumeSource.newBuilder()
                                        .addSources(V1.VolumeProjection.newBuilder()
                                                .setServiceAccountToken(V1.ServiceAccountTokenProjection.newBuilder()
                                                        .setExpirationSeconds(3607)
                                                        .setPath("token")))
                                        .addSources(V1.VolumeProjection.newBuilder()
                                                .setConfigMap(V1.ConfigMapProjection.newBuilder()
                                                        .setLocalObjectReference(localObject("kube-root-ca.crt"))
                                                        .addItems(V1.KeyToPath.newBuilder()
                                                                .setKey("ca.crt")
                                                                .setPath("ca.crt"))))
                                        .setDefaultMode(420))))
                .addContainers(container(
                        p,
                        p.app,
                        image,
                        8080,
                        List.of(
                                "LOG_LEVEL=info",
                                "PORT=8080",
                                "OTEL_SERVICE_NAME=" + p.app,
                                "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector.observability.svc:4317",
                                "DB_HOST=postgres." + p.namespace + ".svc.cluster.local",
                                "CACHE_TTL=30s"),
                        "250m",
                        "256Mi"))
                .addContainers(container(
                        p, "envoy", ENVOY_IMAGE, 9901, List.of("ENVOY_UID=0", "ENVOY_LOG_LEVEL=warn"), "100m", "128Mi"))
                .setRestartPolicy("Always")
                .setTerminationGracePeriodSeconds(30)
                .setDnsPolicy("ClusterFirst")
                .setServiceAccountName("default")
                .setServiceAccount("default")
                .setNodeName(p.node)
                .setSecurityContext(V1.PodSecurityContext.getDefaultInstance())
                .setSchedulerName("default-scheduler")
                .addTolerations(toleration("node.kubernetes.io/not-ready"))
                .addTolerations(toleration("node.kubernetes.io/unreachable"))
                .setPriority(0)
                .setEnableServiceLinks(true)
                .setPreemptionPolicy("PreemptLowerPriority");

        V1.PodStatus.Builder status = V1.PodStatus.newBuilder()
                .setPhase(p.phase)
                .addConditions(podCondition("PodReadyToStartContainers", p.started != null, since))
                .addConditions(podCondition("Initialized", true, p.created))
                .addConditions(podCondition("Ready", p.ready, since))
                .addConditions(podCondition("ContainersReady", p.ready, since))
                .addConditions(podCondition("PodScheduled", true, p.created))
                .setHostIP(nodeIp(p.node))
                .addHostIPs(V1.HostIP.newBuilder().setIp(nodeIp(p.node)))
                .setQosClass("Burstable");
        if (p.started != null) {
            status.setPodIP(podIp(p))
                    .addPodIPs(V1.PodIP.newBuilder().setIp(podIp(p)))
                    .setStartTime(time(p.started))
                    .addContainerStatuses(containerStatus(p, p.app, image))
                    .addContainerStatuses(containerStatus(p, "envoy", ENVOY_IMAGE));
        }
        V1.Pod pod = V1.Pod.newBuilder()
                .setMetadata(meta)
                .setSpec(spec)
                .setStatus(status)
                .build();
        return StorageEnvelope.wrap("v1", "Pod", pod);
    }

    private static final String ENVOY_IMAGE = "docker.io/envoyproxy/envoy:v1.30.1";

    private static String image(String namespace, String app, String templateHash) {
        return "registry.example.com/" + namespace + "/" + app + ":1." + (templateHash.charAt(0) % 7) + "."
                + (templateHash.charAt(1) % 10);
    }

    private static String podIp(Pod p) {
        return "10.244." + (p.ipSuffix / 250) + "." + (p.ipSuffix % 250 + 2);
    }

    private static String nodeIp(String node) {
        return "10.0.0." + (10 + Math.floorMod(node.hashCode(), 50));
    }

    private static V1.Container container(
            Pod p, String name, String image, int port, List<String> env, String cpu, String memory) {
        V1.Container.Builder c = V1.Container.newBuilder()
                .setName(name)
                .setImage(image)
                .addPorts(V1.ContainerPort.newBuilder()
                        .setName("http")
                        .setContainerPort(port)
                        .setProtocol("TCP"));
        for (String e : env) {
            int eq = e.indexOf('=');
            c.addEnv(V1.EnvVar.newBuilder().setName(e.substring(0, eq)).setValue(e.substring(eq + 1)));
        }
        c.setResources(V1.ResourceRequirements.newBuilder()
                .putLimits("cpu", quantity(Integer.parseInt(cpu.replace("m", "")) * 2 + "m"))
                .putLimits("memory", quantity(memory))
                .putRequests("cpu", quantity(cpu))
                .putRequests("memory", quantity(memory)));
        c.addVolumeMounts(V1.VolumeMount.newBuilder()
                        .setName("config")
                        .setReadOnly(true)
                        .setMountPath("/etc/" + name))
                .addVolumeMounts(V1.VolumeMount.newBuilder()
                        .setName("kube-api-access-" + p.name.substring(p.name.length() - 5))
                        .setReadOnly(true)
                        .setMountPath("/var/run/secrets/kubernetes.io/serviceaccount"));
        c.setLivenessProbe(httpProbe("/healthz", port)).setReadinessProbe(httpProbe("/ready", port));
        return c.setTerminationMessagePath("/dev/termination-log")
                .setTerminationMessagePolicy("File")
                .setImagePullPolicy("IfNotPresent")
                .build();
    }

    private static V1.Probe httpProbe(String path, int port) {
        return V1.Probe.newBuilder()
                .setHandler(V1.ProbeHandler.newBuilder()
                        .setHttpGet(V1.HTTPGetAction.newBuilder()
                                .setPath(path)
                                .setPort(IntStr.IntOrString.newBuilder()
                                        .setType(0)
                                        .setIntVal(port))
                                .setScheme("HTTP")))
                .setInitialDelaySeconds(5)
                .setTimeoutSeconds(1)
                .setPeriodSeconds(10)
                .setSuccessThreshold(1)
                .setFailureThreshold(3)
                .build();
    }

    private static V1.Toleration toleration(String key) {
        return V1.Toleration.newBuilder()
                .setKey(key)
                .setOperator("Exists")
                .setEffect("NoExecute")
                .setTolerationSeconds(300)
                .build();
    }

    private static V1.PodCondition podCondition(String type, boolean status, Instant at) {
        return V1.PodCondition.newBuilder()
                .setType(type)
                .setStatus(status ? "True" : "False")
                .setLastProbeTime(Meta.Time.getDefaultInstance())
                .setLastTransitionTime(time(at))
                .build();
    }

    private static V1.ContainerStatus containerStatus(Pod p, String name, String image) {
        V1.ContainerState.Builder state = V1.ContainerState.newBuilder();
        if (p.ready) {
            state.setRunning(V1.ContainerStateRunning.newBuilder().setStartedAt(time(p.started)));
        } else {
            state.setWaiting(V1.ContainerStateWaiting.newBuilder()
                    .setReason(p.restarts > 0 ? "CrashLoopBackOff" : "ContainerCreating")
                    .setMessage(
                            p.restarts > 0
                                    ? "back-off 10s restarting failed container=" + name + " pod=" + p.name + "_"
                                            + p.namespace + "(" + p.uid + ")"
                                    : ""));
        }
        V1.ContainerState.Builder last = V1.ContainerState.newBuilder();
        if (p.restarts > 0) {
            last.setTerminated(V1.ContainerStateTerminated.newBuilder()
                    .setExitCode(137)
                    .setReason("OOMKilled")
                    .setStartedAt(time(p.started))
                    .setFinishedAt(time(p.started))
                    .setContainerID("containerd://" + hex(p.uid + name + (p.restarts - 1), 64)));
        }
        return V1.ContainerStatus.newBuilder()
                .setName(name)
                .setState(state)
                .setLastState(last)
                .setReady(p.ready)
                .setRestartCount(p.restarts)
                .setImage(image)
                .setImageID(image.replaceAll(":[^:/]+$", "") + "@sha256:" + hex(p.uid + name, 64))
                .setContainerID("containerd://" + hex(p.uid + name + p.restarts, 64))
                .setStarted(p.ready)
                .build();
    }

    // ---- config maps, deployments, replica sets ---------------------------------------------

    /**
     * The stored value of a config map of 1–6 KB of Helm-rendered settings, created at
     * {@code created} and written now (its managed fields' time) at Helm's {@code revision}.
     */
    static byte[] configMap(String namespace, String name, int revision, Instant created, Random random) {
        StringBuilder props = new StringBuilder();
        int lines = 20 + random.nextInt(120);
        for (int i = 0; i < lines; i++) {
            props.append(String.format(Locale.ROOT, "%s.setting.%03d=%s%n", name, i, hex(name + revision + i, 16)));
        }
        V1.ConfigMap configMap = V1.ConfigMap.newBuilder()
                .setMetadata(meta(name, namespace, uuidFrom(namespace + name), created)
                        .putLabels("app.kubernetes.io/managed-by", "Helm")
                        .putLabels("revision", Integer.toString(revision))
                        .putAnnotations("meta.helm.sh/release-name", name)
                        .putAnnotations("meta.helm.sh/release-namespace", namespace)
                        .addManagedFields(managedFields(
                                "helm",
                                "v1",
                                now(),
                                "",
                                "{\"f:data\":{\".\":{},\"f:application.properties\":{},\"f:feature-flags.yaml\":{},"
                                        + "\"f:log-level\":{}},\"f:metadata\":{\"f:annotations\":{\".\":{},"
                                        + "\"f:meta.helm.sh/release-name\":{},\"f:meta.helm.sh/release-namespace\":{}},"
                                        + "\"f:labels\":{\".\":{},\"f:app.kubernetes.io/managed-by\":{},"
                                        + "\"f:revision\":{}}}}")))
                .putData("application.properties", props.toString())
                .putData("log-level", random.nextBoolean() ? "info" : "debug")
                .putData(
                        "feature-flags.yaml",
                        "checkout:\n  newFlow: " + random.nextBoolean() + "\n  rollout: " + random.nextInt(100)
                                + "%\nsearch:\n  fuzzy: true\n")
                .build();
        return StorageEnvelope.wrap("v1", "ConfigMap", configMap);
    }

    /**
     * The stored value of a deployment created at {@code created}, at {@code generation}, whose
     * current template has {@code templateHash}, rolled out at {@code updated}. As the deployment
     * controller sets its conditions, both stayed {@code True} since creation (their
     * {@code lastTransitionTime}), and {@code Progressing} was last updated by the rollout.
     */
    static byte[] deployment(
            String namespace,
            String app,
            String templateHash,
            int generation,
            int replicas,
            Instant created,
            Instant updated) {
        V1Apps.Deployment deployment = V1Apps.Deployment.newBuilder()
                .setMetadata(meta(app, namespace, uuidFrom(namespace + app), created)
                        .setGeneration(generation)
                        .putAnnotations("deployment.kubernetes.io/revision", Integer.toString(generation))
                        .putLabels("app", app))
                .setSpec(V1Apps.DeploymentSpec.newBuilder()
                        .setReplicas(replicas)
                        .setSelector(Meta.LabelSelector.newBuilder().putMatchLabels("app", app))
                        .setTemplate(podTemplate(namespace, app, templateHash, false))
                        .setStrategy(V1Apps.DeploymentStrategy.newBuilder()
                                .setType("RollingUpdate")
                                .setRollingUpdate(V1Apps.RollingUpdateDeployment.newBuilder()
                                        .setMaxUnavailable(percent("25%"))
                                        .setMaxSurge(percent("25%"))))
                        .setMinReadySeconds(0)
                        .setRevisionHistoryLimit(REVISION_HISTORY_LIMIT)
                        .setProgressDeadlineSeconds(600))
                .setStatus(V1Apps.DeploymentStatus.newBuilder()
                        .setObservedGeneration(generation)
                        .setReplicas(replicas)
                        .setUpdatedReplicas(replicas)
                        .setReadyReplicas(replicas)
                        .setAvailableReplicas(replicas)
                        .addConditions(V1Apps.DeploymentCondition.newBuilder()
                                .setType("Available")
                                .setStatus("True")
                                .setLastUpdateTime(time(created))
                                .setLastTransitionTime(time(created))
                                .setReason("MinimumReplicasAvailable")
                                .setMessage("Deployment has minimum availability."))
                        .addConditions(V1Apps.DeploymentCondition.newBuilder()
                                .setType("Progressing")
                                .setStatus("True")
                                .setLastUpdateTime(time(updated))
                                .setLastTransitionTime(time(created))
                                .setReason("NewReplicaSetAvailable")
                                .setMessage("ReplicaSet \"" + app + "-" + templateHash
                                        + "\" has successfully progressed.")))
                .build();
        return StorageEnvelope.wrap("apps/v1", "Deployment", deployment);
    }

    /** The stored value of the replica set of {@code app}'s template {@code templateHash}, created at {@code created}. */
    static byte[] replicaSet(
            String namespace, String app, String templateHash, int generation, int replicas, Instant created) {
        V1Apps.ReplicaSet replicaSet = V1Apps.ReplicaSet.newBuilder()
                .setMetadata(meta(
                                app + "-" + templateHash, namespace, uuidFrom(namespace + app + templateHash), created)
                        .setGeneration(generation)
                        .putLabels("app", app)
                        .putLabels("pod-template-hash", templateHash)
                        .putAnnotations("deployment.kubernetes.io/desired-replicas", Integer.toString(replicas))
                        .putAnnotations("deployment.kubernetes.io/max-replicas", Integer.toString(replicas + 1))
                        .putAnnotations("deployment.kubernetes.io/revision", Integer.toString(generation))
                        .addOwnerReferences(ownerReference("apps/v1", "Deployment", app, uuidFrom(namespace + app))))
                .setSpec(V1Apps.ReplicaSetSpec.newBuilder()
                        .setReplicas(replicas)
                        .setSelector(Meta.LabelSelector.newBuilder()
                                .putMatchLabels("app", app)
                                .putMatchLabels("pod-template-hash", templateHash))
                        .setTemplate(podTemplate(namespace, app, templateHash, true)))
                .setStatus(V1Apps.ReplicaSetStatus.newBuilder()
                        .setReplicas(replicas)
                        .setFullyLabeledReplicas(replicas)
                        .setReadyReplicas(replicas)
                        .setAvailableReplicas(replicas)
                        .setObservedGeneration(generation))
                .build();
        return StorageEnvelope.wrap("apps/v1", "ReplicaSet", replicaSet);
    }

    private static V1.PodTemplateSpec podTemplate(String namespace, String app, String templateHash, boolean withHash) {
        Meta.ObjectMeta.Builder meta = Meta.ObjectMeta.newBuilder()
                .setCreationTimestamp(Meta.Time.getDefaultInstance())
                .putLabels("app", app);
        if (withHash) {
            meta.putLabels("pod-template-hash", templateHash);
        }
        return V1.PodTemplateSpec.newBuilder()
                .setMetadata(meta)
                .setSpec(V1.PodSpec.newBuilder()
                        .addContainers(V1.Container.newBuilder()
                                .setName(app)
                                .setImage(image(namespace, app, templateHash))
                                .setResources(V1.ResourceRequirements.getDefaultInstance())
                                .setTerminationMessagePath("/dev/termination-log")
                                .setTerminationMessagePolicy("File")
                                .setImagePullPolicy("IfNotPresent"))
                        .setRestartPolicy("Always")
                        .setTerminationGracePeriodSeconds(30)
                        .setDnsPolicy("ClusterFirst")
                        .setSecurityContext(V1.PodSecurityContext.getDefaultInstance())
                        .setSchedulerName("default-scheduler"))
                .build();
    }

    // ---- nodes, namespaces, leases, events --------------------------------------------------

    /**
     * The stored value of a ready worker node registered at {@code created} (also when its
     * conditions last changed) whose kubelet last reported at {@code heartbeat}.
     */
    static byte[] node(String name, Instant created, Instant heartbeat) {
        Meta.ObjectMeta.Builder meta = meta(name, "", uuidFrom("node" + name), created)
                .putLabels("beta.kubernetes.io/arch", "amd64")
                .putLabels("beta.kubernetes.io/os", "linux")
                .putLabels("kubernetes.io/arch", "amd64")
                .putLabels("kubernetes.io/hostname", name)
                .putLabels("kubernetes.io/os", "linux")
                .putLabels("node.kubernetes.io/instance-type", "m6i.2xlarge")
                .putLabels("topology.kubernetes.io/zone", "zone-" + (char) ('a' + Math.floorMod(name.hashCode(), 3)))
                .putAnnotations("node.alpha.kubernetes.io/ttl", "0")
                .putAnnotations("volumes.kubernetes.io/controller-managed-attach-detach", "true");
        V1.NodeStatus.Builder status = V1.NodeStatus.newBuilder();
        for (String[] r : new String[][] {
            {"cpu", "8", "7910m"}, {"ephemeral-storage", "101430960Ki", "93478772582"},
            {"memory", "32577536Ki", "32475136Ki"}, {"pods", "110", "110"}
        }) {
            status.putCapacity(r[0], quantity(r[1])).putAllocatable(r[0], quantity(r[2]));
        }
        for (String[] c : new String[][] {
            {"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
            {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
            {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
            {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}
        }) {
            status.addConditions(V1.NodeCondition.newBuilder()
                    .setType(c[0])
                    .setStatus(c[1])
                    .setLastHeartbeatTime(time(heartbeat))
                    .setLastTransitionTime(time(created))
                    .setReason(c[2])
                    .setMessage(c[3]));
        }
        status.addAddresses(V1.NodeAddress.newBuilder().setType("InternalIP").setAddress(nodeIp(name)))
                .addAddresses(V1.NodeAddress.newBuilder().setType("Hostname").setAddress(name))
                .setDaemonEndpoints(V1.NodeDaemonEndpoints.newBuilder()
                        .setKubeletEndpoint(V1.DaemonEndpoint.newBuilder().setPort(10250)))
                .setNodeInfo(V1.NodeSystemInfo.newBuilder()
                        .setMachineID(hex("machine" + name, 32))
                        .setSystemUUID(uuidFrom("system" + name))
                        .setBootID(uuidFrom("boot" + name))
                        .setKernelVersion("6.1.0-28-cloud-amd64")
                        .setOsImage("Debian GNU/Linux 12 (bookworm)")
                        .setContainerRuntimeVersion("containerd://1.7.24")
                        .setKubeletVersion("v1.32.0")
                        .setKubeProxyVersion("v1.32.0")
                        .setOperatingSystem("linux")
                        .setArchitecture("amd64"))
                .addImages(V1.ContainerImage.newBuilder()
                        .addNames(ENVOY_IMAGE.replace(":v1.30.1", "@sha256:" + hex("envoy", 64)))
                        .addNames(ENVOY_IMAGE)
                        .setSizeBytes(58_122_340));
        V1.Node node = V1.Node.newBuilder()
                .setMetadata(meta)
                .setSpec(V1.NodeSpec.newBuilder()
                        .setPodCIDR("10.244." + Math.floorMod(name.hashCode(), 200) + ".0/24")
                        .addPodCIDRs("10.244." + Math.floorMod(name.hashCode(), 200) + ".0/24")
                        .setProviderID("aws:///zone/i-" + hex(name, 17)))
                .setStatus(status)
                .build();
        return StorageEnvelope.wrap("v1", "Node", node);
    }

    /** The stored value of an active namespace created at {@code created}. */
    static byte[] namespace(String name, Instant created) {
        V1.Namespace namespace = V1.Namespace.newBuilder()
                .setMetadata(meta(name, "", uuidFrom("namespace" + name), created)
                        .putLabels("kubernetes.io/metadata.name", name))
                .setSpec(V1.NamespaceSpec.newBuilder().addFinalizers("kubernetes"))
                .setStatus(V1.NamespaceStatus.newBuilder().setPhase("Active"))
                .build();
        return StorageEnvelope.wrap("v1", "Namespace", namespace);
    }

    /**
     * The stored value of {@code node}'s lease in {@code kube-node-lease}, created at
     * {@code created} and renewed at {@code renewTime}.
     */
    static byte[] nodeLease(String node, Instant created, Instant renewTime) {
        V1Coordination.Lease lease = V1Coordination.Lease.newBuilder()
                .setMetadata(meta(node, "kube-node-lease", uuidFrom("lease" + node), created)
                        .addOwnerReferences(Meta.OwnerReference.newBuilder()
                                .setApiVersion("v1")
                                .setKind("Node")
                                .setName(node)
                                .setUid(uuidFrom("node" + node)))
                        .addManagedFields(managedFields(
                                "kubelet",
                                "coordination.k8s.io/v1",
                                renewTime,
                                "",
                                "{\"f:metadata\":{\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\""
                                        + uuidFrom("node" + node)
                                        + "\\\"}\":{}}},\"f:spec\":{\"f:holderIdentity\":{},"
                                        + "\"f:leaseDurationSeconds\":{},\"f:renewTime\":{}}}")))
                .setSpec(V1Coordination.LeaseSpec.newBuilder()
                        .setHolderIdentity(node)
                        .setLeaseDurationSeconds(40)
                        .setRenewTime(Meta.MicroTime.newBuilder()
                                .setSeconds(renewTime.getEpochSecond())
                                .setNanos(renewTime.getNano() / 1000 * 1000)))
                .build();
        return StorageEnvelope.wrap("coordination.k8s.io/v1", "Lease", lease);
    }

    /** The stored value of a core/v1 event about {@code involved}, as the kubelet records one. */
    static byte[] event(String namespace, String name, Pod involved, String reason, String message, String type) {
        Instant t = now();
        V1.Event event = V1.Event.newBuilder()
                .setMetadata(meta(name, namespace, UUID.randomUUID().toString(), t))
                .setInvolvedObject(V1.ObjectReference.newBuilder()
                        .setKind("Pod")
                        .setNamespace(namespace)
                        .setName(involved.name)
                        .setUid(involved.uid)
                        .setApiVersion("v1")
                        .setFieldPath("spec.containers{" + involved.app + "}"))
                .setReason(reason)
                .setMessage(message)
                .setSource(V1.EventSource.newBuilder().setComponent("kubelet").setHost(involved.node))
                .setFirstTimestamp(time(t))
                .setLastTimestamp(time(t))
                .setCount(1)
                .setType(type)
                .setEventTime(Meta.MicroTime.getDefaultInstance())
                .setReportingComponent("kubelet")
                .setReportingInstance(involved.node)
                .build();
        return StorageEnvelope.wrap("v1", "Event", event);
    }

    // ---- shared pieces ---------------------------------------------------------------------

    /**
     * ObjectMeta with the fields Go always writes: an empty selfLink and resourceVersion (which
     * kube-apiserver clears before it stores an object), generation 0.
     */
    private static Meta.ObjectMeta.Builder meta(String name, String namespace, String uid, Instant created) {
        return Meta.ObjectMeta.newBuilder()
                .setName(name)
                .setGenerateName("")
                .setNamespace(namespace)
                .setSelfLink("")
                .setUid(uid)
                .setResourceVersion("")
                .setGeneration(0)
                .setCreationTimestamp(time(created));
    }

    private static Meta.OwnerReference ownerReference(String apiVersion, String kind, String name, String uid) {
        return Meta.OwnerReference.newBuilder()
                .setApiVersion(apiVersion)
                .setKind(kind)
                .setName(name)
                .setUid(uid)
                .setController(true)
                .setBlockOwnerDeletion(true)
                .build();
    }

    private static Meta.ManagedFieldsEntry managedFields(
            String manager, String apiVersion, Instant time, String subresource, String fieldsV1) {
        return Meta.ManagedFieldsEntry.newBuilder()
                .setManager(manager)
                .setOperation("Update")
                .setApiVersion(apiVersion)
                .setTime(time(time))
                .setFieldsType("FieldsV1")
                .setFieldsV1(Meta.FieldsV1.newBuilder().setRaw(ByteString.copyFrom(fieldsV1, StandardCharsets.UTF_8)))
                .setSubresource(subresource)
                .build();
    }

    private static V1.LocalObjectReference localObject(String name) {
        return V1.LocalObjectReference.newBuilder().setName(name).build();
    }

    private static Resource.Quantity quantity(String value) {
        return Resource.Quantity.newBuilder().setString(value).build();
    }

    private static IntStr.IntOrString percent(String value) {
        return IntStr.IntOrString.newBuilder().setType(1).setStrVal(value).build();
    }

    /** A {@code metav1.Time}: whole seconds, as kube-apiserver stores it. */
    static Meta.Time time(Instant at) {
        return Meta.Time.newBuilder()
                .setSeconds(at.getEpochSecond())
                .setNanos(0)
                .build();
    }

    /** A stable UUID-shaped id derived from {@code seed}. */
    static String uuidFrom(String seed) {
        return UUID.nameUUIDFromBytes(seed.getBytes(StandardCharsets.UTF_8)).toString();
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

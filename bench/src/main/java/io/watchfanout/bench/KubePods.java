package io.watchfanout.bench;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.V1;
import io.watchfanout.testkit.StorageEnvelope;

/**
 * Pods as kube-apiserver stores them in etcd: the {@code k8s\0} magic and a {@code runtime.Unknown}
 * envelope around a {@code v1.Pod} message, built with the schema's generated classes. A pod of
 * about {@code size} bytes: labels, an owner reference, two containers with environment, status
 * with conditions, and an annotation that pads it to the size asked for.
 *
 * <p>Stateless; thread-safe.
 */
final class KubePods {
    /** The key prefix the pods are stored under (kube-apiserver's default {@code --etcd-prefix}). */
    static final String PREFIX = "/registry/pods/";

    private KubePods() {}

    /** The etcd key of pod {@code name} in {@code namespace}. */
    static ByteString key(String namespace, String name) {
        return BenchEvents.key(PREFIX + namespace + "/" + name);
    }

    /**
     * The stored bytes of pod {@code name} in {@code namespace}, scheduled to {@code node}, about
     * {@code size} bytes long; {@code generation} changes an annotation so that each update differs.
     */
    static ByteString pod(String namespace, String name, String node, int size, long generation) {
        V1.Pod.Builder pod = V1.Pod.newBuilder()
                .setMetadata(Meta.ObjectMeta.newBuilder()
                        .setName(name)
                        .setNamespace(namespace)
                        .setUid("6b1f0c1e-" + Integer.toHexString(name.hashCode()))
                        .setGenerateName("web-7d4b9c8f6-")
                        .setCreationTimestamp(Meta.Time.newBuilder().setSeconds(1_700_000_000L))
                        .putLabels("app", "web")
                        .putLabels("pod-template-hash", "7d4b9c8f6")
                        .putLabels("tier", "frontend")
                        .putAnnotations("bench/generation", Long.toString(generation))
                        .addOwnerReferences(Meta.OwnerReference.newBuilder()
                                .setApiVersion("apps/v1")
                                .setKind("ReplicaSet")
                                .setName("web-7d4b9c8f6")
                                .setUid("0c9a7e52-3f1d-4e2b-9a61-5b0f2c8d7e41")
                                .setController(true)
                                .setBlockOwnerDeletion(true)))
                .setSpec(V1.PodSpec.newBuilder()
                        .setNodeName(node)
                        .setRestartPolicy("Always")
                        .setServiceAccountName("default")
                        .setSchedulerName("default-scheduler")
                        .addContainers(container("web", "registry.example.com/shop/web:1.4.2"))
                        .addContainers(container("sidecar", "registry.example.com/mesh/proxy:2.1.0")))
                .setStatus(V1.PodStatus.newBuilder()
                        .setPhase("Running")
                        .setHostIP("10.0.3.17")
                        .setPodIP("10.244.3.21")
                        .setQosClass("Burstable")
                        .setStartTime(Meta.Time.newBuilder().setSeconds(1_700_000_001L))
                        .addConditions(condition("Initialized"))
                        .addConditions(condition("Ready"))
                        .addConditions(condition("ContainersReady"))
                        .addConditions(condition("PodScheduled"))
                        .addContainerStatuses(status("web"))
                        .addContainerStatuses(status("sidecar")));
        int missing = size - envelope("v1", "Pod", pod.build().toByteString()).size();
        if (missing > 0) {
            pod.getMetadataBuilder()
                    .putAnnotations(
                            "bench/padding", BenchEvents.value(missing, 7).toStringUtf8());
        }
        return envelope("v1", "Pod", pod.build().toByteString());
    }

    /**
     * An object as kube-apiserver stores it: the {@code k8s\0} magic and a {@code runtime.Unknown}
     * of {@code apiVersion} and {@code kind} around {@code raw}, the object's protobuf message.
     */
    static ByteString envelope(String apiVersion, String kind, ByteString raw) {
        return UnsafeByteOperations.unsafeWrap(StorageEnvelope.wrap(apiVersion, kind, raw));
    }

    private static V1.Container.Builder container(String name, String image) {
        V1.Container.Builder c = V1.Container.newBuilder()
                .setName(name)
                .setImage(image)
                .setImagePullPolicy("IfNotPresent")
                .setTerminationMessagePath("/dev/termination-log")
                .setTerminationMessagePolicy("File");
        for (int i = 0; i < 6; i++) {
            c.addEnv(V1.EnvVar.newBuilder().setName("SETTING_" + i).setValue("value-of-setting-" + i));
        }
        return c;
    }

    private static V1.PodCondition.Builder condition(String type) {
        return V1.PodCondition.newBuilder()
                .setType(type)
                .setStatus("True")
                .setLastTransitionTime(Meta.Time.newBuilder().setSeconds(1_700_000_002L));
    }

    private static V1.ContainerStatus.Builder status(String name) {
        return V1.ContainerStatus.newBuilder()
                .setName(name)
                .setReady(true)
                .setStarted(true)
                .setRestartCount(0)
                .setImage("registry.example.com/shop/" + name + ":1.4.2")
                .setImageID("registry.example.com/shop/" + name + "@sha256:9f2b")
                .setContainerID("containerd://4be1c0e7")
                .setState(V1.ContainerState.newBuilder()
                        .setRunning(V1.ContainerStateRunning.newBuilder()
                                .setStartedAt(Meta.Time.newBuilder().setSeconds(1_700_000_003L))));
    }
}

package io.watchfanout.kube.codec;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import io.kubernetes.client.proto.IntStr;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Resource;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1;
import io.kubernetes.client.proto.V1Admissionregistration;
import io.kubernetes.client.proto.V1Apiextensions;
import io.kubernetes.client.proto.V1Apps;
import io.kubernetes.client.proto.V1Autoscaling;
import io.kubernetes.client.proto.V1Batch;
import io.kubernetes.client.proto.V1Certificates;
import io.kubernetes.client.proto.V1Coordination;
import io.kubernetes.client.proto.V1Discovery;
import io.kubernetes.client.proto.V1Events;
import io.kubernetes.client.proto.V1Flowcontrol;
import io.kubernetes.client.proto.V1Networking;
import io.kubernetes.client.proto.V1Node;
import io.kubernetes.client.proto.V1Policy;
import io.kubernetes.client.proto.V1Rbac;
import io.kubernetes.client.proto.V1Resource;
import io.kubernetes.client.proto.V1Scheduling;
import io.kubernetes.client.proto.V1Storage;
import io.kubernetes.client.proto.V1beta1Apiextensions;
import io.kubernetes.client.proto.V2Apidiscovery;
import io.kubernetes.client.proto.V2Autoscaling;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The protobuf schema of the Kubernetes objects the node can render: the message descriptors
 * of {@code io.kubernetes:client-java-proto}, looked up by the {@code apiVersion} and {@code kind}
 * that a stored object's envelope names.
 *
 * <p>Only the descriptors are used: stored objects are read by {@link ProtoJsonWriter} straight
 * from their bytes, never through the artifact's generated parsers.
 *
 * <p>kube-apiserver's proto packages follow the group's first DNS label
 * ({@code rbac.authorization.k8s.io/v1} → {@code k8s.io.api.rbac.v1}, the core group
 * {@code v1} → {@code k8s.io.api.core.v1}); the apiextensions group lives in its own
 * repository's package. Immutable and thread-safe; one shared instance, {@link #standard()}.
 */
public final class KubeSchema {
    private static final String APIEXTENSIONS_PACKAGE = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.";
    private static final KubeSchema STANDARD = new KubeSchema(List.of(
            V1.getDescriptor(),
            Meta.getDescriptor(),
            Runtime.getDescriptor(),
            IntStr.getDescriptor(),
            Resource.getDescriptor(),
            V1Apps.getDescriptor(),
            V1Batch.getDescriptor(),
            V1Rbac.getDescriptor(),
            V1Coordination.getDescriptor(),
            V1Discovery.getDescriptor(),
            V1Events.getDescriptor(),
            V1Networking.getDescriptor(),
            V1Policy.getDescriptor(),
            V1Storage.getDescriptor(),
            V1Autoscaling.getDescriptor(),
            V2Autoscaling.getDescriptor(),
            V1Scheduling.getDescriptor(),
            V1Node.getDescriptor(),
            V1Certificates.getDescriptor(),
            V1Admissionregistration.getDescriptor(),
            V1Flowcontrol.getDescriptor(),
            V1Resource.getDescriptor(),
            V1Apiextensions.getDescriptor(),
            V1beta1Apiextensions.getDescriptor(),
            V2Apidiscovery.getDescriptor()));

    private final Map<String, Descriptor> byFullName = new HashMap<>();

    private KubeSchema(List<FileDescriptor> files) {
        for (FileDescriptor file : files) {
            for (Descriptor type : file.getMessageTypes()) {
                byFullName.put(type.getFullName(), type);
            }
        }
    }

    /** The schema of every GA group the node serves (and apiextensions v1beta1, as CRDs are stored). */
    public static KubeSchema standard() {
        return STANDARD;
    }

    /**
     * The message of {@code kind} in {@code apiVersion} ({@code "v1"}, {@code "apps/v1"},
     * {@code "rbac.authorization.k8s.io/v1"}), or empty when the schema has no such type (a
     * custom resource, a group or version newer than the schema).
     */
    public Optional<Descriptor> type(String apiVersion, String kind) {
        int slash = apiVersion.indexOf('/');
        String group = slash < 0 ? "" : apiVersion.substring(0, slash);
        String version = apiVersion.substring(slash + 1);
        String pkg;
        if (group.isEmpty()) {
            pkg = "k8s.io.api.core." + version;
        } else if (group.equals("apiextensions.k8s.io")) {
            pkg = APIEXTENSIONS_PACKAGE + version;
        } else {
            int dot = group.indexOf('.');
            pkg = "k8s.io.api." + (dot < 0 ? group : group.substring(0, dot)) + "." + version;
        }
        return Optional.ofNullable(byFullName.get(pkg + "." + kind));
    }

    /** Every top-level message of the schema, in no particular order. */
    Collection<Descriptor> messages() {
        return Collections.unmodifiableCollection(byFullName.values());
    }

    /** A message by its full protobuf name (e.g. {@code k8s.io.apimachinery.pkg.apis.meta.v1.Status}). */
    Optional<Descriptor> message(String fullName) {
        return Optional.ofNullable(byFullName.get(fullName));
    }
}

package io.watchfanout.kube.kafka.streams;

import io.watchfanout.kube.codec.resources.KubeResource;

/**
 * The names of the topics the Kubernetes topics application writes, all under the deployment's
 * topic prefix: a change topic {@code <prefix>.k8s.<plural>[.<group>]} and a compacted latest-object
 * topic {@code <prefix>.k8s-latest.<plural>[.<group>]} per resource (the resource as kubectl names
 * it: {@code pods}, {@code deployments.apps}), and one errors topic {@code <prefix>.k8s-errors}.
 * Stateless.
 */
public final class KubeTopicNames {
    private KubeTopicNames() {}

    /** The resource as kubectl names it: {@code pods}, {@code deployments.apps}. */
    public static String qualified(KubeResource resource) {
        return resource.group().isEmpty() ? resource.plural() : resource.plural() + "." + resource.group();
    }

    /** {@code <prefix>.k8s.<qualifiedResource>}: every change of the resource's objects. */
    public static String changes(String topicPrefix, String qualifiedResource) {
        return topicPrefix + ".k8s." + qualifiedResource;
    }

    /** {@code <prefix>.k8s-latest.<qualifiedResource>}: compacted, the latest object per key. */
    public static String latest(String topicPrefix, String qualifiedResource) {
        return topicPrefix + ".k8s-latest." + qualifiedResource;
    }

    /** {@code <prefix>.k8s-errors}: the values that could not be decoded. */
    public static String errors(String topicPrefix) {
        return topicPrefix + ".k8s-errors";
    }
}

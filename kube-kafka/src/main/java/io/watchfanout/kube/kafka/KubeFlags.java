package io.watchfanout.kube.kafka;

import io.watchfanout.common.Check;
import io.watchfanout.common.Flag;

/**
 * The flags that every runnable reading Kubernetes objects off the events topic takes, with the same
 * name, unit and check (the Kubernetes topics application, {@code kube-events}). Stateless.
 */
public final class KubeFlags {
    private KubeFlags() {}

    /** {@code --etcd-prefix PREFIX}: kube-apiserver's {@code --etcd-prefix}, {@code /registry} by default. */
    public static Flag<String> etcdPrefix() {
        return Flag.text("--etcd-prefix", "PREFIX")
                .defaultValue("/registry")
                .unit("etcd key prefix")
                .check(Check.<String>of("a key prefix starting with /", p -> p.startsWith("/")))
                .help("kube-apiserver's --etcd-prefix: where the cluster's objects are in etcd.");
    }
}

/**
 * The Kubernetes topics application: a Kafka Streams application (exactly-once v2) reading the
 * events topic and writing, per resource served (built-ins and the CRDs' resources from their
 * CRD's event on, chosen with {@code --include}/{@code --exclude}), a change topic
 * {@code <prefix>.k8s.<resource>} of watch events with CloudEvents headers and a compacted
 * latest-object topic {@code <prefix>.k8s-latest.<resource>} with a tombstone on delete, and the
 * errors topic {@code <prefix>.k8s-errors} naming key, revision and reason of each value that cannot
 * be decoded ({@link io.watchfanout.kube.kafka.streams.KubeTopicsTopology},
 * {@link io.watchfanout.kube.kafka.streams.KubeTopicsMain}).
 *
 * <p>Not yet: the protobuf form, the revision a latest-object topic is complete up to, a resync
 * deleting the objects it no longer holds from the latest-object topics, lag in revisions, learning
 * CRDs from the state topic on a first start past their events' retention.
 */
package io.watchfanout.kube.kafka.streams;

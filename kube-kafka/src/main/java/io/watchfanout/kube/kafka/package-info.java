/**
 * Kubernetes objects on Kafka: the events topic's records ({@code <prefix>.events}, etcd events of
 * kube-apiserver's keys) decoded into Kubernetes watch events through the Kubernetes codec, and the
 * Serdes with which consumers read them. Nothing here needs the fan-out node.
 *
 * <ul>
 *   <li>{@link io.watchfanout.kube.kafka.KubeEventDecoder} turns one record into a
 *       {@link io.watchfanout.kube.kafka.KubeWatchEvent} (ADDED/MODIFIED/DELETED, group/version/kind
 *       and resource, namespace, name, resourceVersion = the mod revision or the deletion's, the
 *       previous resourceVersion, the object as kube-apiserver's JSON), or says why it is skipped
 *       ({@code Progress}, {@code Resync}, keys of no resource) or cannot be decoded (corrupt, CBOR,
 *       encrypted, no schema): {@link io.watchfanout.kube.kafka.DecodeResult}. Custom resources are
 *       served from their CRD's event on. Secrets' {@code data}/{@code stringData} values are
 *       redacted ({@link io.watchfanout.kube.kafka.SecretRedaction}) unless the decoder is made with
 *       {@code SecretPolicy.PUBLISH}: then whoever reads the topics reads every Secret.
 *   <li>{@link io.watchfanout.kube.kafka.KubeSerdes}: a change topic's values (a watch event
 *       {@code {"type":…,"object":{…}}} with CloudEvents 1.0 binary-mode headers,
 *       {@link io.watchfanout.kube.kafka.CloudEventHeaders}) and a latest-object topic's values (the
 *       object's JSON, a tombstone on delete) as Gson JSON trees. Model classes come from the tree or
 *       the bytes: client-java's {@code new io.kubernetes.client.openapi.JSON().deserialize(json,
 *       V1Pod.class)}, fabric8's {@code Serialization.unmarshal(json, Pod.class)}.
 *   <li>{@link io.watchfanout.kube.kafka.ObjectContinuity} proves per object that a reader missed and
 *       repeated nothing (each event's previous resourceVersion equals the last one seen).
 *   <li>{@link io.watchfanout.kube.kafka.streams} holds the Kafka Streams application that writes the
 *       per-resource change, latest-object and errors topics ({@code KubeTopicsMain}).
 * </ul>
 *
 * <p>Thread-safety is stated per class: the decoder and the continuity check belong to one thread,
 * the Serdes are shared.
 */
package io.watchfanout.kube.kafka;

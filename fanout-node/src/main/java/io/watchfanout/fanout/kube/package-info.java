/**
 * Kubernetes objects as kube-apiserver stores them in etcd, read without decoding them into
 * messages: {@link io.watchfanout.fanout.kube.StoredObject} tells a value's storage form (protobuf
 * envelope, JSON, CBOR, encrypted) and where the object lies; {@link
 * io.watchfanout.fanout.kube.ProtoJsonWriter} writes a protobuf object as kube-apiserver's JSON,
 * with its resourceVersion from the revision; {@link io.watchfanout.fanout.kube.ResourceVersionSplice}
 * makes the protobuf a client receives from the stored bytes, the resourceVersion spliced into
 * ObjectMeta; {@link io.watchfanout.fanout.kube.KubeSchema} holds the descriptors of
 * {@code io.kubernetes:client-java-proto}.
 *
 * <p>These are the encoders of the Kubernetes API front end, run once per event and encoding on
 * the feed thread (invariant 6); nothing here knows a transport.
 */
package io.watchfanout.fanout.kube;

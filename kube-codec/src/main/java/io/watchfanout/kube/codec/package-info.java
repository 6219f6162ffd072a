/**
 * The Kubernetes codec: objects as kube-apiserver stores them in etcd, read and written without
 * decoding them into messages, and their wire forms. It knows no transport, no Kafka client and
 * nothing of the fan-out node, so that any reader of stored Kubernetes objects can use it (the
 * node's Kubernetes API does). Its public surface is this list ({@code CodecSurfaceTest} keeps
 * each package to its list):
 *
 * <ul>
 *   <li>stored objects: {@link io.watchfanout.kube.codec.StoredObject} tells a value's storage
 *       form from its first bytes (protobuf envelope {@code k8s\0} + {@code runtime.Unknown}, JSON,
 *       CBOR, {@code k8s:enc:} encryption) and where the typed object lies; {@link
 *       io.watchfanout.kube.codec.StoredBytes} views a value's bytes where they lie; {@link
 *       io.watchfanout.kube.codec.AtRest} opens values encrypted at rest before anything reads
 *       them; {@link io.watchfanout.kube.codec.ProtoReader} reads protobuf fields off the bytes;
 *       {@link io.watchfanout.kube.codec.UndecodableObjectException} says why an object cannot be
 *       read;
 *   <li>the schema and JSON: {@link io.watchfanout.kube.codec.KubeSchema} holds the descriptors
 *       of {@code io.kubernetes:client-java-proto}; {@link io.watchfanout.kube.codec.ProtoJsonWriter}
 *       writes a protobuf object as kube-apiserver's JSON in one pass (per message type its plans:
 *       JSON names, inlined Go structs, the types with JSON forms of their own), with
 *       {@code metadata.resourceVersion} from the revision; {@link
 *       io.watchfanout.kube.codec.ResourceVersionSplice} makes the protobuf a client receives, the
 *       resourceVersion spliced into ObjectMeta and everything else copied byte for byte; {@link
 *       io.watchfanout.kube.codec.ObjectFields} reads labels and selectable fields from the stored
 *       bytes; {@link io.watchfanout.kube.codec.JsonFields} reads JSON fields leniently, as Go does;
 *   <li>wire forms: {@link io.watchfanout.kube.codec.KubeWatchFrames} frames watch events (JSON
 *       lines; client-go's length-prefixed protobuf; bookmarks; ERROR Status events), {@link
 *       io.watchfanout.kube.codec.KubeListWriter} list pages (streamed in JSON; in protobuf with all
 *       lengths known before the first byte; items taken from a memo where the caller keeps one), {@link
 *       io.watchfanout.kube.codec.PartialObjectMetadata} an object's metadata alone (kube-apiserver's
 *       {@code as=PartialObjectMetadata} answers, in JSON and protobuf);
 *   <li>custom resources: {@link io.watchfanout.kube.codec.CustomResources} reads a stored CRD into
 *       the resource it defines (stored objects of other versions are converted as kube-apiserver's
 *       {@code None} strategy does).
 * </ul>
 *
 * <p>Beside it: {@code resources} (the served resources and their etcd paths), {@code select}
 * (label and field selectors), {@code table} (kubectl's tables), {@code atrest} (kube-apiserver's
 * encryption configuration and ciphers). They import the root and {@code resources}, never each
 * other; the root imports {@code resources} and {@code atrest} only.
 *
 * <p>Everything here runs once per event and encoding (invariant 6) or once per list item, and is
 * thread-safe unless its documentation says otherwise.
 */
package io.watchfanout.kube.codec;

/**
 * The Kubernetes API front end, on the HTTP port: kube-apiserver's read paths (discovery, gets,
 * lists, watches, Table) over the watch core, with kube-apiserver's authorization. {@link
 * io.watchfanout.fanout.kube.KubeApi} is mounted on the HTTP transport; reads are {@code KubeReads}
 * ({@code KubeReadOptions}, {@code KubeRevisionWait}, {@code KubeItems}, {@code KubeListItems},
 * {@code KubeResponse}), watches {@code KubeWatches} through the core's one entry ({@code
 * KubeEncodings}, {@code KubeAttributes}, {@code KubeBookmarks}), refusals {@code KubeError}, and
 * {@code KubeAuthorization} is the one authorization step, over {@code KubeObjects} (the RBAC
 * snapshot and the Node graph) and the authorizers of {@code io.watchfanout.fanout.kube.authz}.
 *
 * <p>Objects themselves (storage forms, the protobuf reader and JSON writer, the resourceVersion
 * splice, watch frames, list pages, Table, resources, selectors, decryption at rest) are the
 * Kubernetes codec's ({@code io.watchfanout.kube.codec}, the {@code kube-codec} module); this
 * package wires them to the core: encodings registered with the core, items memoized on events,
 * the {@code --encryption-provider-config} file reloaded ({@code AtRestKeys}).
 */
package io.watchfanout.fanout.kube;

/**
 * Kubernetes authorization and ServiceAccount tokens, as kube-apiserver has them: {@link
 * io.watchfanout.fanout.kube.authz.KubernetesAuthorizer} is {@code --authorization-mode} (the modes
 * in order, the first that allows deciding) over {@link io.watchfanout.fanout.kube.authz.Rbac} (a
 * snapshot of roles and bindings, read from stored objects by {@code RbacObjects}) and {@link
 * io.watchfanout.fanout.kube.authz.NodeAuthorizer} (a kubelet's reads, over the {@code NodeGraph}
 * that {@code PodReferences} keeps from stored pods); {@link
 * io.watchfanout.fanout.kube.authz.ServiceAccountTokens} is the authenticator of kube-apiserver's
 * ServiceAccount tokens, handed to the node-wide access control ({@code security}) through {@code
 * NodeSecurity.ServiceAccountAuthenticator}.
 *
 * <p>Decisions take {@code security.RequestAttributes} (kube-apiserver's authorizer attributes) and
 * run when a request or watch starts and when a role, binding or pod changes, never per event.
 * Imports: the node-wide {@code security} package and the Kubernetes codec; no transport and no
 * other front end. {@code security} does not import this package.
 */
package io.watchfanout.fanout.kube.authz;

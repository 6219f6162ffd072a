package io.watchfanout.fanout.security;

import java.util.List;

/**
 * What a Kubernetes request asks, as kube-apiserver's authorizers see it (k8s.io/apiserver
 * {@code authorizer.Attributes}): who asks, the verb, and either a resource (API group, resource,
 * subresource, namespace and name, each empty when not given) or a non-resource path. The Kubernetes
 * authorizers decide on it, and the audit log and access control record it beside the decision.
 *
 * @param user the authenticated user name
 * @param groups the user's groups
 * @param verb kube-apiserver's verb ({@code get}, {@code list}, {@code watch}, ...)
 * @param apiGroup the API group, empty for the core group
 * @param resource the resource (plural), empty for a non-resource request
 * @param subresource the subresource, empty for none
 * @param namespace the namespace, empty for a cluster-scoped request or one across namespaces
 * @param name the object's name, empty for a collection
 * @param path the request's path (what a non-resource request is decided on)
 * @param resourceRequest true for a request of a resource, false for a non-resource path
 */
public record RequestAttributes(
        String user,
        List<String> groups,
        String verb,
        String apiGroup,
        String resource,
        String subresource,
        String namespace,
        String name,
        String path,
        boolean resourceRequest) {}

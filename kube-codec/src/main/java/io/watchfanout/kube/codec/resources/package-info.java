/**
 * The resources the Kubernetes API serves and where kube-apiserver stores their objects in etcd:
 * {@link io.watchfanout.kube.codec.resources.KubeResource} is one resource (names, scope, storage
 * path, selectable fields, a custom resource's printer columns), {@link
 * io.watchfanout.kube.codec.resources.KubeResources} the table of built-ins (with their odd paths:
 * {@code minions}, {@code services/specs}, ...) and custom resources, which parses an etcd key into
 * its resource, namespace and name. Imports nothing else of the codec.
 */
package io.watchfanout.kube.codec.resources;

package io.watchfanout.kube.codec.resources;

import java.util.List;
import java.util.Set;

/**
 * One resource the Kubernetes API serves: its names as discovery announces them, and where
 * kube-apiserver stores its objects in etcd.
 *
 * @param group API group, empty for the core group
 * @param version the version served (the storage version: objects are served as stored)
 * @param kind the object kind ({@code Pod})
 * @param plural the resource name in paths ({@code pods})
 * @param singular the singular name ({@code pod})
 * @param shortNames kubectl's short names ({@code po})
 * @param namespaced whether objects live in namespaces
 * @param storagePath the key segment(s) after the etcd prefix, as kube-apiserver's storage uses
 *     them ({@code pods}; odd ones: {@code minions}, {@code services/specs},
 *     {@code services/endpoints}, {@code controllers}, {@code ingress}; groups for CRDs and custom
 *     resources: {@code apiextensions.k8s.io/customresourcedefinitions})
 * @param fieldSelectors the field selectors kube-apiserver accepts beyond {@code metadata.name}
 *     and {@code metadata.namespace} (each registry's {@code GetAttrs})
 * @param printerColumns a custom resource's {@code additionalPrinterColumns}, empty for built-ins
 *     (whose tables come from kube-apiserver's printers)
 */
public record KubeResource(
        String group,
        String version,
        String kind,
        String plural,
        String singular,
        List<String> shortNames,
        boolean namespaced,
        String storagePath,
        Set<String> fieldSelectors,
        List<PrinterColumn> printerColumns) {

    /** A column of a custom resource's table: a JSONPath into the object, with its type and format. */
    public record PrinterColumn(
            String name, String type, String format, String description, int priority, String jsonPath) {}

    /** {@code v1} for the core group, else {@code group/version}. */
    public String apiVersion() {
        return group.isEmpty() ? version : group + "/" + version;
    }

    /** The kind of this resource's lists ({@code PodList}). */
    public String listKind() {
        return kind + "List";
    }

    /** Whether {@code field} may be used in a field selector on this resource. */
    public boolean selectsField(String field) {
        return field.equals("metadata.name") || field.equals("metadata.namespace") || fieldSelectors.contains(field);
    }
}

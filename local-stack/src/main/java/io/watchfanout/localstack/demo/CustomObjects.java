package io.watchfanout.localstack.demo;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The demo's custom resource, {@code Backup} of group {@value #GROUP}, and its definition, as
 * kube-apiserver stores them: JSON, not protobuf. The CustomResourceDefinition is stored in
 * {@code apiextensions.k8s.io/v1beta1} (kube-apiserver still encodes CRDs at v1beta1 in etcd,
 * whichever version they were created with; kubernetes/kubernetes#102855), with its one
 * version's schema, status subresource and {@code additionalPrinterColumns} (JSONPath) hoisted
 * to {@code spec}, as the v1-to-v1beta1 conversion does when every version shares them.
 * Backups are stored at their storage version, {@code demo.example.com/v1}, with the keys in
 * Go's order for unstructured objects (sorted).
 *
 * <p>Stateless and thread-safe.
 */
final class CustomObjects {
    /** The custom resource's API group. */
    static final String GROUP = "demo.example.com";
    /** The custom resource's plural, its path segment and the first part of the CRD's name. */
    static final String PLURAL = "backups";
    /** The CRD's name and key suffix: {@code <plural>.<group>}. */
    static final String DEFINITION_NAME = PLURAL + "." + GROUP;

    private CustomObjects() {}

    /** The key of the CRD under {@code prefix} (e.g. {@code /registry}). */
    static String definitionKey(String prefix) {
        return prefix + "/apiextensions.k8s.io/customresourcedefinitions/" + DEFINITION_NAME;
    }

    /** The key of the backup {@code namespace/name} under {@code prefix}. */
    static String backupKey(String prefix, String namespace, String name) {
        return prefix + "/" + GROUP + "/" + PLURAL + "/" + namespace + "/" + name;
    }

    /**
     * The stored value of the CustomResourceDefinition of backups, created (and its names
     * accepted and established) at {@code created}.
     */
    static byte[] definition(Instant created) {
        Json j = new Json()
                .beginObject()
                .field("kind", "CustomResourceDefinition")
                .field("apiVersion", "apiextensions.k8s.io/v1beta1");
        j.name("metadata")
                .beginObject()
                .field("name", DEFINITION_NAME)
                .field("uid", DemoObjects.uuidFrom("crd" + DEFINITION_NAME))
                .field("generation", 1)
                .field("creationTimestamp", created.toString())
                .endObject();
        j.name("spec").beginObject().field("group", GROUP).field("version", "v1");
        names(j.name("names"));
        j.field("scope", "Namespaced");
        j.name("validation").beginObject().name("openAPIV3Schema");
        schema(j);
        j.endObject();
        j.name("subresources")
                .beginObject()
                .name("status")
                .beginObject()
                .endObject()
                .endObject();
        j.name("versions")
                .beginArray()
                .beginObject()
                .field("name", "v1")
                .field("served", true)
                .field("storage", true)
                .endObject()
                .endArray();
        j.name("additionalPrinterColumns").beginArray();
        column(j, "Database", "string", ".spec.database", "The database backed up");
        column(j, "Schedule", "string", ".spec.schedule", "When backups run (cron)");
        column(j, "Phase", "string", ".status.phase", "The last backup's phase");
        column(j, "Last Success", "date", ".status.lastSuccessTime", "When the last backup succeeded");
        column(j, "Age", "date", ".metadata.creationTimestamp", "");
        j.endArray();
        j.name("conversion").beginObject().field("strategy", "None").endObject();
        j.field("preserveUnknownFields", false).endObject();
        j.name("status").beginObject().name("conditions").beginArray();
        condition(j, "NamesAccepted", "NoConflicts", "no conflicts found", created);
        condition(j, "Established", "InitialNamesAccepted", "the initial names have been accepted", created);
        j.endArray();
        names(j.name("acceptedNames"));
        j.name("storedVersions").beginArray().value("v1").endArray().endObject();
        return bytes(j.endObject());
    }

    private static void names(Json j) {
        j.beginObject()
                .field("plural", PLURAL)
                .field("singular", "backup")
                .name("shortNames")
                .beginArray()
                .value("bk")
                .endArray()
                .field("kind", "Backup")
                .field("listKind", "BackupList")
                .endObject();
    }

    private static void schema(Json j) {
        j.beginObject().field("type", "object").name("properties").beginObject();
        j.name("spec").beginObject().field("type", "object").name("properties").beginObject();
        stringProperty(j, "database");
        stringProperty(j, "schedule");
        j.name("retentionDays")
                .beginObject()
                .field("type", "integer")
                .field("minimum", 1)
                .endObject();
        j.endObject()
                .name("required")
                .beginArray()
                .value("database")
                .value("schedule")
                .endArray();
        j.endObject();
        j.name("status")
                .beginObject()
                .field("type", "object")
                .name("properties")
                .beginObject();
        j.name("phase")
                .beginObject()
                .field("type", "string")
                .name("enum")
                .beginArray()
                .value("Scheduled")
                .value("Running")
                .value("Succeeded")
                .value("Failed")
                .endArray()
                .endObject();
        j.name("lastSuccessTime")
                .beginObject()
                .field("type", "string")
                .field("format", "date-time")
                .endObject();
        j.name("sizeBytes").beginObject().field("type", "integer").endObject();
        j.endObject().endObject();
        j.endObject().endObject();
    }

    private static void stringProperty(Json j, String name) {
        j.name(name).beginObject().field("type", "string").endObject();
    }

    private static void column(Json j, String name, String type, String jsonPath, String description) {
        j.beginObject().field("name", name).field("type", type);
        if (!description.isEmpty()) {
            j.field("description", description);
        }
        j.field("JSONPath", jsonPath).endObject();
    }

    private static void condition(Json j, String type, String reason, String message, Instant at) {
        j.beginObject()
                .field("type", type)
                .field("status", "True")
                .field("lastTransitionTime", at.toString())
                .field("reason", reason)
                .field("message", message)
                .endObject();
    }

    /**
     * The stored value of one backup.
     *
     * @param created the backup's {@code creationTimestamp} (whole seconds)
     * @param generation the spec's generation, from 1
     * @param phase {@code Scheduled}, {@code Running}, {@code Succeeded} or {@code Failed}
     * @param lastSuccess when a backup last succeeded, or null if none has
     * @param sizeBytes the size of the last successful backup in bytes
     */
    static byte[] backup(
            String namespace,
            String name,
            String database,
            String schedule,
            Instant created,
            long generation,
            String phase,
            Instant lastSuccess,
            long sizeBytes) {
        Json j = new Json().beginObject().field("apiVersion", GROUP + "/v1").field("kind", "Backup");
        j.name("metadata")
                .beginObject()
                .field("creationTimestamp", created.toString())
                .field("generation", generation)
                .field("name", name)
                .field("namespace", namespace)
                .field("uid", DemoObjects.uuidFrom("backup" + namespace + name))
                .endObject();
        j.name("spec")
                .beginObject()
                .field("database", database)
                .field("retentionDays", 7)
                .field("schedule", schedule)
                .endObject();
        j.name("status").beginObject();
        if (lastSuccess != null) {
            j.field("lastSuccessTime", lastSuccess.toString());
        }
        j.field("phase", phase);
        if (sizeBytes > 0) {
            j.field("sizeBytes", sizeBytes);
        }
        j.endObject();
        return bytes(j.endObject());
    }

    private static byte[] bytes(Json j) {
        return j.toString().getBytes(StandardCharsets.UTF_8);
    }
}

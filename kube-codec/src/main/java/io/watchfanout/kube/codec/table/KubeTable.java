package io.watchfanout.kube.codec.table;

import static io.watchfanout.kube.codec.JsonFields.arr;
import static io.watchfanout.kube.codec.JsonFields.integer;
import static io.watchfanout.kube.codec.JsonFields.obj;
import static io.watchfanout.kube.codec.JsonFields.str;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import io.watchfanout.kube.codec.resources.KubeResource;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * kubectl's tables ({@code Accept: application/json;as=Table;v=v1;g=meta.k8s.io}): the
 * {@code meta.k8s.io/v1} {@code Table} of a list or of a watch event, with the default columns
 * kube-apiserver's printers give pods, nodes, services, deployments, namespaces and events
 * (kubernetes {@code pkg/printers/internalversion}), and {@code Name} and {@code Created At} for
 * every other resource. Each row carries the object's metadata as a
 * {@code PartialObjectMetadata}, kube-apiserver's default {@code includeObject=Metadata}.
 *
 * <p>Ages are relative to the time given, as kube-apiserver renders them when it answers.
 * Stateless and thread-safe.
 */
public final class KubeTable {
    private KubeTable() {}

    /** One column definition. */
    record Column(String name, String type, String format, String description, int priority) {}

    private static final Column NAME = new Column(
            "Name",
            "string",
            "name",
            "Name must be unique within a namespace. Is required when creating resources, although some resources "
                    + "may allow a client to request the generation of an appropriate name automatically.",
            0);
    private static final Column AGE = new Column(
            "Age",
            "string",
            "",
            "CreationTimestamp is a timestamp representing the server time when this object was created.",
            0);

    static List<Column> columns(KubeResource resource) {
        if (!resource.printerColumns().isEmpty()) {
            List<Column> columns = new ArrayList<>(List.of(NAME));
            for (KubeResource.PrinterColumn c : resource.printerColumns()) {
                columns.add(new Column(c.name(), c.type(), c.format(), c.description(), c.priority()));
            }
            return columns;
        }
        return switch (key(resource)) {
            case "v1/Pod" ->
                List.of(
                        NAME,
                        column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
                        column("Status", "The aggregate status of the containers in this pod."),
                        column(
                                "Restarts",
                                "The number of times the containers in this pod have been restarted and when"
                                        + " the last container in this pod has restarted."),
                        AGE,
                        wide("IP", "IP address allocated to the pod. Routable at least within the cluster."),
                        wide("Node", "Name of the node the pod is scheduled on."),
                        wide("Nominated Node", "Name of the node the pod is nominated for preemption."),
                        wide("Readiness Gates", "Readiness gates of the pod."));
            case "v1/Node" ->
                List.of(
                        NAME,
                        column("Status", "The status of the node"),
                        column("Roles", "The roles of the node"),
                        AGE,
                        column("Version", "Kubelet Version reported by the node."),
                        wide("Internal-IP", "List of internal IPs of the node."),
                        wide("External-IP", "List of external IPs of the node."),
                        wide(
                                "OS-Image",
                                "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7)."),
                        wide("Kernel-Version", "Kernel Version reported by the node from 'uname -r'."),
                        wide("Container-Runtime", "Container runtime version reported by the node."));
            case "v1/Service" ->
                List.of(
                        NAME,
                        column("Type", "The type of the service."),
                        column("Cluster-IP", "The IP address of the service."),
                        column("External-IP", "The external IP addresses of the service."),
                        column("Port(s)", "The ports of the service."),
                        AGE,
                        wide("Selector", "The label selector of the service."));
            case "apps/v1/Deployment" ->
                List.of(
                        NAME,
                        column("Ready", "Number of the pod with ready state"),
                        new Column(
                                "Up-to-date",
                                "integer",
                                "",
                                "Total number of non-terminated pods targeted by this"
                                        + " deployment that have the desired template spec.",
                                0),
                        new Column(
                                "Available",
                                "integer",
                                "",
                                "Total number of available pods (ready for at least"
                                        + " minReadySeconds) targeted by this deployment.",
                                0),
                        AGE,
                        wide("Containers", "Names of each container in the template."),
                        wide("Images", "Images referenced by each container in the template."),
                        wide(
                                "Selector",
                                "Label selector for pods. Existing ReplicaSets whose pods are selected by this"
                                        + " will be the ones affected by this deployment."));
            case "v1/Namespace" -> List.of(NAME, column("Status", "The status of the namespace"), AGE);
            case "v1/ConfigMap" -> List.of(NAME, integerColumn("Data", "Number of data in configmap"), AGE);
            case "v1/Secret" ->
                List.of(
                        NAME,
                        column("Type", "The type of the secret"),
                        integerColumn("Data", "The number of entries in the secret"),
                        AGE);
            case "v1/ServiceAccount" ->
                List.of(NAME, integerColumn("Secrets", "The number of secrets of the service account"), AGE);
            case "coordination.k8s.io/v1/Lease" -> List.of(NAME, column("Holder", "The holder of the lease"), AGE);
            case "apps/v1/ReplicaSet" ->
                List.of(
                        NAME,
                        integerColumn("Desired", "Number of desired pods."),
                        integerColumn("Current", "Number of actual replicas."),
                        integerColumn("Ready", "Number of ready replicas."),
                        AGE,
                        wide("Containers", "Names of each container in the template."),
                        wide("Images", "Images referenced by each container in the template."),
                        wide("Selector", "Selector is a label query over pods that should match the replica count."));
            case "apps/v1/StatefulSet" ->
                List.of(
                        NAME,
                        column("Ready", "Number of the pod with ready state"),
                        AGE,
                        wide("Containers", "Names of each container in the template."),
                        wide("Images", "Images referenced by each container in the template."));
            case "v1/Event" ->
                List.of(
                        column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
                        column("Type", "Type of this event (Normal, Warning), new types could be added in the future."),
                        column(
                                "Reason",
                                "This should be a short, machine understandable string that gives the reason for"
                                        + " this event being generated."),
                        column("Object", "The object that this event is about."),
                        column("Message", "A human-readable description of the status of this operation."),
                        wide("Subobject", "The subobject of the involved object this event is about."),
                        wide("Source", "The component reporting this event."),
                        wide("First Seen", "The time at which the event was first recorded."),
                        new Column("Count", "integer", "", "The number of times this event has occurred.", 1),
                        wide("Name", "The name of the event."));
            default ->
                List.of(
                        NAME,
                        new Column(
                                "Created At",
                                "date",
                                "",
                                "CreationTimestamp is a timestamp representing the server time when this object was"
                                        + " created.",
                                0));
        };
    }

    /** The cells of one object's row, in the order of {@link #columns}. */
    static JsonArray cells(KubeResource resource, JsonObject object, Instant now) {
        JsonArray cells = new JsonArray();
        JsonObject meta = obj(object, "metadata");
        String name = str(meta, "name");
        String age = age(str(meta, "creationTimestamp"), now);
        if (!resource.printerColumns().isEmpty()) {
            cells.add(name);
            for (KubeResource.PrinterColumn c : resource.printerColumns()) {
                JsonElement value = JsonPath.first(object, c.jsonPath());
                cells.add(c.type().equals("date") ? dateCell(value, now) : JsonPath.cell(value));
            }
            return cells;
        }
        switch (key(resource)) {
            case "v1/Pod" -> PodRow.cells(object, name, age, now, cells);
            case "v1/Node" -> nodeCells(object, name, age, cells);
            case "v1/Service" -> serviceCells(object, name, age, cells);
            case "apps/v1/Deployment" -> {
                JsonObject spec = obj(object, "spec");
                JsonObject status = obj(object, "status");
                cells.add(name);
                cells.add(integer(status, "readyReplicas") + "/"
                        + (spec.has("replicas") ? integer(spec, "replicas") : 1));
                cells.add(integer(status, "updatedReplicas"));
                cells.add(integer(status, "availableReplicas"));
                cells.add(age);
                templateCells(spec, cells);
                cells.add(selector(obj(obj(spec, "selector"), "matchLabels")));
            }
            case "v1/Namespace" -> {
                cells.add(name);
                cells.add(str(obj(object, "status"), "phase"));
                cells.add(age);
            }
            case "v1/Event" -> eventCells(object, name, now, cells);
            case "v1/ConfigMap" -> {
                cells.add(name);
                cells.add(obj(object, "data").size() + obj(object, "binaryData").size());
                cells.add(age);
            }
            case "v1/Secret" -> {
                cells.add(name);
                cells.add(str(object, "type"));
                cells.add(obj(object, "data").size());
                cells.add(age);
            }
            case "v1/ServiceAccount" -> {
                cells.add(name);
                cells.add(arr(object, "secrets").size());
                cells.add(age);
            }
            case "coordination.k8s.io/v1/Lease" -> {
                cells.add(name);
                cells.add(str(obj(object, "spec"), "holderIdentity"));
                cells.add(age);
            }
            case "apps/v1/ReplicaSet" -> {
                JsonObject spec = obj(object, "spec");
                JsonObject status = obj(object, "status");
                cells.add(name);
                cells.add(spec.has("replicas") ? integer(spec, "replicas") : 1);
                cells.add(integer(status, "replicas"));
                cells.add(integer(status, "readyReplicas"));
                cells.add(age);
                templateCells(spec, cells);
                cells.add(selector(obj(obj(spec, "selector"), "matchLabels")));
            }
            case "apps/v1/StatefulSet" -> {
                JsonObject spec = obj(object, "spec");
                cells.add(name);
                cells.add(integer(obj(object, "status"), "readyReplicas") + "/"
                        + (spec.has("replicas") ? integer(spec, "replicas") : 1));
                cells.add(age);
                templateCells(spec, cells);
            }
            default -> {
                cells.add(name);
                cells.add(str(meta, "creationTimestamp"));
            }
        }
        return cells;
    }

    /**
     * A list as a Table.
     *
     * @param objects the page's objects, as their JSON (resourceVersion set)
     */
    public static byte[] list(
            KubeResource resource,
            List<JsonObject> objects,
            long resourceVersion,
            String continueToken,
            long remainingItemCount,
            Instant now) {
        JsonObject table = table(resource);
        JsonObject meta = obj(table, "metadata");
        meta.addProperty("resourceVersion", Long.toString(resourceVersion));
        if (continueToken != null) {
            meta.addProperty("continue", continueToken);
            if (remainingItemCount >= 0) {
                meta.addProperty("remainingItemCount", remainingItemCount);
            }
        }
        JsonArray rows = new JsonArray();
        for (JsonObject o : objects) {
            rows.add(row(resource, o, now));
        }
        table.add("rows", rows);
        return table.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static JsonObject table(KubeResource resource) {
        JsonObject table = new JsonObject();
        table.addProperty("kind", "Table");
        table.addProperty("apiVersion", "meta.k8s.io/v1");
        table.add("metadata", new JsonObject());
        JsonArray defs = new JsonArray();
        for (Column c : columns(resource)) {
            JsonObject d = new JsonObject();
            d.addProperty("name", c.name());
            d.addProperty("type", c.type());
            d.addProperty("format", c.format());
            d.addProperty("description", c.description());
            d.addProperty("priority", c.priority());
            defs.add(d);
        }
        table.add("columnDefinitions", defs);
        return table;
    }

    private static JsonObject row(KubeResource resource, JsonObject object, Instant now) {
        JsonObject row = new JsonObject();
        row.add("cells", cells(resource, object, now));
        JsonObject partial = new JsonObject();
        partial.addProperty("kind", "PartialObjectMetadata");
        partial.addProperty("apiVersion", "meta.k8s.io/v1");
        partial.add("metadata", obj(object, "metadata"));
        row.add("object", partial);
        return row;
    }

    private static void nodeCells(JsonObject node, String name, String age, JsonArray cells) {
        JsonObject status = obj(node, "status");
        String ready = "Unknown";
        for (JsonElement c : arr(status, "conditions")) {
            JsonObject condition = c.getAsJsonObject();
            if (str(condition, "type").equals("Ready")) {
                ready = switch (str(condition, "status")) {
                    case "True" -> "Ready";
                    case "False" -> "NotReady";
                    default -> "Unknown";
                };
            }
        }
        if (obj(node, "spec").has("unschedulable")
                && obj(node, "spec").get("unschedulable").getAsBoolean()) {
            ready += ",SchedulingDisabled";
        }
        TreeSet<String> roles = new TreeSet<>();
        for (Map.Entry<String, JsonElement> label :
                obj(obj(node, "metadata"), "labels").entrySet()) {
            if (label.getKey().startsWith("node-role.kubernetes.io/")) {
                String role = label.getKey().substring("node-role.kubernetes.io/".length());
                if (!role.isEmpty()) {
                    roles.add(role);
                }
            } else if (label.getKey().equals("kubernetes.io/role")) {
                roles.add(label.getValue().getAsString());
            }
        }
        JsonObject info = obj(status, "nodeInfo");
        cells.add(name);
        cells.add(ready);
        cells.add(roles.isEmpty() ? "<none>" : String.join(",", roles));
        cells.add(age);
        cells.add(str(info, "kubeletVersion"));
        cells.add(address(status, "InternalIP"));
        cells.add(address(status, "ExternalIP"));
        cells.add(orNone(str(info, "osImage")));
        cells.add(orNone(str(info, "kernelVersion")));
        cells.add(orNone(str(info, "containerRuntimeVersion")));
    }

    private static String address(JsonObject status, String type) {
        List<String> found = new ArrayList<>();
        for (JsonElement a : arr(status, "addresses")) {
            if (str(a.getAsJsonObject(), "type").equals(type)) {
                found.add(str(a.getAsJsonObject(), "address"));
            }
        }
        return found.isEmpty() ? "<none>" : String.join(",", found);
    }

    private static void serviceCells(JsonObject service, String name, String age, JsonArray cells) {
        JsonObject spec = obj(service, "spec");
        String type = str(spec, "type").isEmpty() ? "ClusterIP" : str(spec, "type");
        List<String> external = new ArrayList<>();
        arr(spec, "externalIPs").forEach(ip -> external.add(ip.getAsString()));
        String externalIp;
        switch (type) {
            case "LoadBalancer" -> {
                List<String> ingress = new ArrayList<>();
                for (JsonElement i : arr(obj(obj(service, "status"), "loadBalancer"), "ingress")) {
                    String ip = str(i.getAsJsonObject(), "ip");
                    ingress.add(ip.isEmpty() ? str(i.getAsJsonObject(), "hostname") : ip);
                }
                ingress.addAll(external);
                externalIp = ingress.isEmpty() ? "<pending>" : String.join(",", ingress);
            }
            case "ExternalName" -> externalIp = str(spec, "externalName");
            default -> externalIp = external.isEmpty() ? "<none>" : String.join(",", external);
        }
        List<String> ports = new ArrayList<>();
        for (JsonElement p : arr(spec, "ports")) {
            JsonObject port = p.getAsJsonObject();
            String protocol = str(port, "protocol").isEmpty() ? "TCP" : str(port, "protocol");
            long nodePort = integer(port, "nodePort");
            ports.add(integer(port, "port") + (nodePort > 0 ? ":" + nodePort : "") + "/" + protocol);
        }
        String clusterIp = str(spec, "clusterIP");
        cells.add(name);
        cells.add(type);
        cells.add(clusterIp.isEmpty() ? "<none>" : clusterIp);
        cells.add(externalIp);
        cells.add(ports.isEmpty() ? "<none>" : String.join(",", ports));
        cells.add(age);
        cells.add(selector(obj(spec, "selector")));
    }

    private static void eventCells(JsonObject event, String name, Instant now, JsonArray cells) {
        String first = str(event, "firstTimestamp");
        String last = str(event, "lastTimestamp");
        String eventTime = str(event, "eventTime");
        String lastSeen = !last.isEmpty() ? last : !eventTime.isEmpty() ? eventTime : first;
        JsonObject involved = obj(event, "involvedObject");
        JsonObject source = obj(event, "source");
        String component = str(source, "component");
        String host = str(source, "host");
        cells.add(lastSeen.isEmpty() ? "<unknown>" : age(lastSeen, now));
        cells.add(str(event, "type"));
        cells.add(str(event, "reason"));
        cells.add(str(involved, "kind").toLowerCase(Locale.ROOT) + "/" + str(involved, "name"));
        cells.add(str(event, "message").strip());
        cells.add(str(involved, "fieldPath"));
        cells.add(host.isEmpty() ? component : component + ", " + host);
        cells.add(first.isEmpty() ? (eventTime.isEmpty() ? "<unknown>" : age(eventTime, now)) : age(first, now));
        cells.add(event.has("count") ? event.get("count").getAsLong() : 1);
        cells.add(name);
    }

    private static String selector(JsonObject labels) {
        if (labels.size() == 0) {
            return "<none>";
        }
        List<String> terms = new ArrayList<>();
        for (String k : new TreeSet<>(labels.keySet())) {
            terms.add(k + "=" + labels.get(k).getAsString());
        }
        return String.join(",", terms);
    }

    /**
     * A {@code date} printer column's cell as kube-apiserver's table converter writes it: the time
     * since the timestamp in kubectl's human form ({@code 704d}), {@code <invalid>} for a string that
     * is not one, and the value as it is when it is not a string.
     */
    static JsonElement dateCell(JsonElement value, Instant now) {
        if (value == null
                || !value.isJsonPrimitive()
                || !value.getAsJsonPrimitive().isString()) {
            return JsonPath.cell(value);
        }
        try {
            return new JsonPrimitive(HumanDuration.format(Duration.between(Instant.parse(value.getAsString()), now)));
        } catch (DateTimeParseException e) {
            return new JsonPrimitive("<invalid>");
        }
    }

    static String age(String timestamp, Instant now) {
        if (timestamp.isEmpty()) {
            return "<unknown>";
        }
        try {
            return HumanDuration.format(Duration.between(Instant.parse(timestamp), now));
        } catch (DateTimeParseException e) {
            return "<unknown>";
        }
    }

    /** The wide Containers and Images cells of a workload's pod template ({@code spec.template.spec}). */
    private static void templateCells(JsonObject spec, JsonArray cells) {
        JsonObject podSpec = obj(obj(spec, "template"), "spec");
        List<String> containers = new ArrayList<>();
        List<String> images = new ArrayList<>();
        for (JsonElement c : arr(podSpec, "containers")) {
            containers.add(str(c.getAsJsonObject(), "name"));
            images.add(str(c.getAsJsonObject(), "image"));
        }
        cells.add(String.join(",", containers));
        cells.add(String.join(",", images));
    }

    private static Column integerColumn(String name, String description) {
        return new Column(name, "integer", "", description, 0);
    }

    private static Column column(String name, String description) {
        return new Column(name, "string", "", description, 0);
    }

    private static Column wide(String name, String description) {
        return new Column(name, "string", "", description, 1);
    }

    private static String key(KubeResource resource) {
        return resource.apiVersion() + "/" + resource.kind();
    }

    private static String orNone(String s) {
        return s.isEmpty() ? "<unknown>" : s;
    }
}

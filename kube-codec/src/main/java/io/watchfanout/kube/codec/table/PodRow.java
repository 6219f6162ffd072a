package io.watchfanout.kube.codec.table;

import static io.watchfanout.kube.codec.JsonFields.arr;
import static io.watchfanout.kube.codec.JsonFields.integer;
import static io.watchfanout.kube.codec.JsonFields.obj;
import static io.watchfanout.kube.codec.JsonFields.str;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * A pod's row as kube-apiserver's pod printer computes it: READY (ready containers, sidecars
 * included, over all of them), STATUS (the phase, overridden by the pod's reason, the first
 * unfinished init container as {@code Init:N/M} or {@code Init:<reason>}, the last container's
 * waiting or terminated reason, {@code Terminating} while being deleted), RESTARTS with the age
 * of the last restart, and the wide columns.
 */
final class PodRow {
    private PodRow() {}

    static void cells(JsonObject pod, String name, String age, Instant now, JsonArray cells) {
        JsonObject spec = obj(pod, "spec");
        JsonObject status = obj(pod, "status");
        JsonArray initSpecs = arr(spec, "initContainers");
        int total = arr(spec, "containers").size();
        int ready = 0;
        long restarts = 0;
        long sidecarRestarts = 0;
        String lastRestart = "";
        String reason = str(status, "phase");
        if (!str(status, "reason").isEmpty()) {
            reason = str(status, "reason");
        }

        boolean initializing = false;
        JsonArray initStatuses = arr(status, "initContainerStatuses");
        for (int i = 0; i < initStatuses.size(); i++) {
            JsonObject c = initStatuses.get(i).getAsJsonObject();
            restarts += integer(c, "restartCount");
            lastRestart = later(lastRestart, str(obj(obj(c, "lastState"), "terminated"), "finishedAt"));
            boolean sidecar = i < initSpecs.size()
                    && str(initSpecs.get(i).getAsJsonObject(), "restartPolicy").equals("Always");
            if (sidecar) {
                total++;
                sidecarRestarts += integer(c, "restartCount");
                if (isTrue(c, "started") && isTrue(c, "ready")) {
                    ready++;
                }
                continue;
            }
            JsonObject state = obj(c, "state");
            JsonObject terminated = obj(state, "terminated");
            JsonObject waiting = obj(state, "waiting");
            if (state.has("terminated") && integer(terminated, "exitCode") == 0) {
                continue;
            }
            if (state.has("terminated")) {
                reason = !str(terminated, "reason").isEmpty()
                        ? "Init:" + str(terminated, "reason")
                        : integer(terminated, "signal") != 0
                                ? "Init:Signal:" + integer(terminated, "signal")
                                : "Init:ExitCode:" + integer(terminated, "exitCode");
            } else if (state.has("waiting")
                    && !str(waiting, "reason").isEmpty()
                    && !str(waiting, "reason").equals("PodInitializing")) {
                reason = "Init:" + str(waiting, "reason");
            } else {
                reason = "Init:" + i + "/" + initSpecs.size();
            }
            initializing = true;
            break;
        }

        if (!initializing || hasCondition(status, "Initialized")) {
            restarts = sidecarRestarts;
            boolean running = false;
            JsonArray statuses = arr(status, "containerStatuses");
            for (int i = statuses.size() - 1; i >= 0; i--) {
                JsonObject c = statuses.get(i).getAsJsonObject();
                restarts += integer(c, "restartCount");
                lastRestart = later(lastRestart, str(obj(obj(c, "lastState"), "terminated"), "finishedAt"));
                JsonObject state = obj(c, "state");
                JsonObject waiting = obj(state, "waiting");
                JsonObject terminated = obj(state, "terminated");
                if (!str(waiting, "reason").isEmpty()) {
                    reason = str(waiting, "reason");
                } else if (!str(terminated, "reason").isEmpty()) {
                    reason = str(terminated, "reason");
                } else if (state.has("terminated")) {
                    reason = integer(terminated, "signal") != 0
                            ? "Signal:" + integer(terminated, "signal")
                            : "ExitCode:" + integer(terminated, "exitCode");
                } else if (isTrue(c, "ready") && state.has("running")) {
                    running = true;
                    ready++;
                }
            }
            if (reason.equals("Completed") && running) {
                reason = hasCondition(status, "Ready") ? "Running" : "NotReady";
            }
        }
        JsonObject meta = obj(pod, "metadata");
        if (meta.has("deletionTimestamp") && !meta.get("deletionTimestamp").isJsonNull()) {
            reason = str(status, "reason").equals("NodeLost") ? "Unknown" : "Terminating";
        }

        cells.add(name);
        cells.add(ready + "/" + total);
        cells.add(reason);
        cells.add(
                lastRestart.isEmpty()
                        ? Long.toString(restarts)
                        : restarts + " (" + KubeTable.age(lastRestart, now) + " ago)");
        cells.add(age);
        String ip = str(status, "podIP");
        String node = str(spec, "nodeName");
        String nominated = str(status, "nominatedNodeName");
        cells.add(ip.isEmpty() ? "<none>" : ip);
        cells.add(node.isEmpty() ? "<none>" : node);
        cells.add(nominated.isEmpty() ? "<none>" : nominated);
        cells.add(readinessGates(spec, status));
    }

    private static String readinessGates(JsonObject spec, JsonObject status) {
        JsonArray gates = arr(spec, "readinessGates");
        if (gates.isEmpty()) {
            return "<none>";
        }
        int met = 0;
        for (JsonElement g : gates) {
            if (hasCondition(status, str(g.getAsJsonObject(), "conditionType"))) {
                met++;
            }
        }
        return met + "/" + gates.size();
    }

    private static boolean hasCondition(JsonObject status, String type) {
        for (JsonElement c : arr(status, "conditions")) {
            JsonObject condition = c.getAsJsonObject();
            if (str(condition, "type").equals(type) && str(condition, "status").equals("True")) {
                return true;
            }
        }
        return false;
    }

    private static boolean isTrue(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isBoolean() && e.getAsBoolean();
    }

    /** The later of two RFC 3339 timestamps, either of which may be empty. */
    private static String later(String a, String b) {
        if (a.isEmpty()) {
            return b;
        }
        if (b.isEmpty()) {
            return a;
        }
        try {
            return Instant.parse(a).isAfter(Instant.parse(b)) ? a : b;
        } catch (DateTimeParseException e) {
            return a;
        }
    }
}

package io.watchfanout.fanout.security;

import com.google.gson.stream.JsonWriter;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail: one JSON line on the logger {@code watchfanout.audit} per refused request
 * (authentication or authorization or limit) and per watch start and end, with the node,
 * identity, method, API, verb, range and, at the end, duration, frames and reason. Lines are
 * written when a request or watch starts or ends, never per event; the node's logback.xml sends
 * this logger through an asynchronous appender so that a slow log never holds a request.
 *
 * <p>Thread-safe.
 */
final class AuditLog {
    static final String LOGGER = "watchfanout.audit";
    private static final Logger LOG = LoggerFactory.getLogger(LOGGER);

    private final String nodeId;

    AuditLog(String nodeId) {
        this.nodeId = nodeId;
    }

    void unauthenticated(Listener listener, String api, String reason) {
        if (LOG.isInfoEnabled()) {
            LOG.info(line("unauthenticated", null, api, null, null, -1, -1, reason, listener, -1, null));
        }
    }

    /** @param request the Kubernetes request, whose verb, resource, namespace and name are logged, or null */
    void denied(Identity id, String api, Verb verb, KeyRange range, String reason, RequestAttributes request) {
        if (LOG.isInfoEnabled()) {
            LOG.info(line("denied", id, api, verb, range, -1, -1, reason, null, -1, request));
        }
    }

    void watchStarted(long grant, Identity id, String api, KeyRange range, RequestAttributes request) {
        if (LOG.isInfoEnabled()) {
            LOG.info(line(
                    "watch-start",
                    id,
                    api,
                    request == null ? Verb.WATCH : null,
                    range,
                    -1,
                    -1,
                    null,
                    null,
                    grant,
                    request));
        }
    }

    void watchEnded(
            long grant,
            Identity id,
            String api,
            KeyRange range,
            long durationMillis,
            long frames,
            String reason,
            RequestAttributes request) {
        if (LOG.isInfoEnabled()) {
            LOG.info(line(
                    "watch-end",
                    id,
                    api,
                    request == null ? Verb.WATCH : null,
                    range,
                    durationMillis,
                    frames,
                    reason,
                    null,
                    grant,
                    request));
        }
    }

    /** A Kubernetes request's attributes, as kube-apiserver's audit events name them. */
    private static void kubernetes(JsonWriter w, RequestAttributes r) throws IOException {
        w.name("verb").value(r.verb());
        if (!r.resourceRequest()) {
            w.name("path").value(r.path());
            return;
        }
        w.name("apiGroup").value(r.apiGroup());
        w.name("resource").value(r.resource());
        if (!r.subresource().isEmpty()) {
            w.name("subresource").value(r.subresource());
        }
        w.name("namespace").value(r.namespace());
        w.name("name").value(r.name());
    }

    private String line(
            String event,
            Identity id,
            String api,
            Verb verb,
            KeyRange range,
            long durationMillis,
            long frames,
            String reason,
            Listener listener,
            long grant,
            RequestAttributes request) {
        StringWriter out = new StringWriter(256);
        try (JsonWriter w = new JsonWriter(out)) {
            w.beginObject();
            w.name("audit").value(event);
            w.name("node").value(nodeId);
            if (grant >= 0) {
                w.name("watch").value(grant);
            }
            if (listener != null) {
                w.name("listener").value(listener.name().toLowerCase(Locale.ROOT));
            }
            if (id != null) {
                w.name("identity").value(id.name());
                w.name("method").value(id.method().name().toLowerCase(Locale.ROOT));
                if (!id.groups().isEmpty()) {
                    w.name("groups").beginArray();
                    for (String g : new TreeSet<>(id.groups())) {
                        w.value(g);
                    }
                    w.endArray();
                }
            }
            if (api != null) {
                w.name("api").value(api);
            }
            if (verb != null) {
                w.name("verb").value(verb.ruleName());
            }
            if (request != null) {
                kubernetes(w, request);
            }
            if (range != null) {
                w.name("range").value(range.toString());
            }
            if (durationMillis >= 0) {
                w.name("durationMs").value(durationMillis);
            }
            if (frames >= 0) {
                w.name("frames").value(frames);
            }
            if (reason != null) {
                w.name("reason").value(reason);
            }
            w.endObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }
}

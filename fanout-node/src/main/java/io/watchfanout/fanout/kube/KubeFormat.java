package io.watchfanout.fanout.kube;

import java.util.Locale;

/**
 * The forms a Kubernetes read is answered in, chosen from the request's {@code Accept} as
 * kube-apiserver negotiates it (k8s.io/apiserver {@code negotiation}): the first acceptable media
 * type wins; {@code *}{@code /*}, {@code application/*} and no header mean JSON.
 */
public enum KubeFormat {
    /** {@code application/json}: objects as kube-apiserver's JSON. */
    JSON("application/json"),
    /** {@code application/vnd.kubernetes.protobuf}: the stored bytes with the resourceVersion set. */
    PROTOBUF("application/vnd.kubernetes.protobuf"),
    /** kubectl's {@code application/json;as=Table;v=v1;g=meta.k8s.io}: a {@code meta.k8s.io/v1} Table. */
    TABLE("application/json;as=Table;v=v1;g=meta.k8s.io");

    /** The 406 message when no media type of {@code Accept} is served, as kube-apiserver lists them. */
    static final String ACCEPTED = "only the following media types are accepted: application/json, "
            + "application/vnd.kubernetes.protobuf, application/json;as=Table;v=v1;g=meta.k8s.io";

    private final String mediaType;

    KubeFormat(String mediaType) {
        this.mediaType = mediaType;
    }

    /** The response's {@code Content-Type}. */
    public String mediaType() {
        return mediaType;
    }

    /**
     * The form of a read with header {@code accept}.
     *
     * @param protobufServed whether the resource has a protobuf form (built-ins; custom resources
     *     are JSON only, and a client asking for protobuf first gets its next choice)
     * @param tableServed whether a Table may answer (reads of objects, not discovery)
     * @return null when no media type of {@code accept} is served (a 406)
     */
    static KubeFormat negotiate(String accept, boolean protobufServed, boolean tableServed) {
        if (accept == null || accept.isBlank()) {
            return JSON;
        }
        for (String range : accept.split(",")) {
            String[] parts = range.split(";");
            String type = parts[0].trim().toLowerCase(Locale.ROOT);
            String as = null;
            String group = null;
            String version = null;
            for (int i = 1; i < parts.length; i++) {
                String p = parts[i].trim();
                int eq = p.indexOf('=');
                if (eq < 0) {
                    continue;
                }
                String name = p.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                String value = p.substring(eq + 1).trim();
                switch (name) {
                    case "as" -> as = value;
                    case "g" -> group = value;
                    case "v" -> version = value;
                    default -> {}
                }
            }
            switch (type) {
                case "application/json", "*/*", "application/*" -> {
                    if (as == null) {
                        return JSON;
                    }
                    if (tableServed
                            && as.equals("Table")
                            && "meta.k8s.io".equals(group)
                            && ("v1".equals(version) || "v1beta1".equals(version))) {
                        return TABLE;
                    }
                }
                case "application/vnd.kubernetes.protobuf" -> {
                    if (as == null && protobufServed) {
                        return PROTOBUF;
                    }
                }
                default -> {}
            }
        }
        return null;
    }
}

package io.watchfanout.fanout.kube;

import io.watchfanout.kube.codec.resources.KubeResource;
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
    TABLE("application/json;as=Table;v=v1;g=meta.k8s.io"),
    /**
     * {@code application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1} (and
     * {@code as=PartialObjectMetadataList} for a list): the objects' metadata alone, in JSON.
     */
    METADATA_JSON("application/json"),
    /** The same in protobuf ({@code application/vnd.kubernetes.protobuf;as=PartialObjectMetadata…}). */
    METADATA_PROTOBUF("application/vnd.kubernetes.protobuf");

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

    /** Whether the answer is protobuf (a full object or its metadata). */
    boolean protobuf() {
        return this == PROTOBUF || this == METADATA_PROTOBUF;
    }

    /** Whether the answer is the objects' metadata alone ({@code PartialObjectMetadata}). */
    boolean metadata() {
        return this == METADATA_JSON || this == METADATA_PROTOBUF;
    }

    /**
     * What a read answers, for the metadata-only forms: one object (a get, or each event of a
     * watch: a {@code PartialObjectMetadata}) or a list (a {@code PartialObjectMetadataList}).
     *
     * @param list whether the read is a list
     * @param goType the Go type kube-apiserver would name in its refusal ({@code *v1.Pod},
     *     {@code *v1.PodList}, {@code *unstructured.Unstructured} for a custom resource)
     */
    record Answer(boolean list, String goType) {
        /** The answer of a get or watch ({@code list} false) or a list of {@code resource}. */
        static Answer of(KubeResource resource, boolean builtIn, boolean list) {
            String type = builtIn ? "*" + resource.version() + "." + resource.kind() : "*unstructured.Unstructured";
            return new Answer(list, list ? type + "List" : type);
        }
    }

    /**
     * The form of a read with header {@code accept}, without the metadata-only forms (discovery,
     * and tests of the other forms).
     *
     * @return null when no media type of {@code accept} is served (a 406)
     */
    static KubeFormat negotiate(String accept, boolean protobufServed, boolean tableServed) {
        try {
            return negotiate(accept, protobufServed, tableServed, null);
        } catch (KubeError e) {
            throw new AssertionError("no metadata-only form without an answer", e);
        }
    }

    /**
     * The form of a read with header {@code accept}.
     *
     * @param protobufServed whether the resource has a protobuf form (built-ins; custom resources
     *     are JSON only, and a client asking for protobuf first gets its next choice; so is a
     *     metadata-only protobuf answer, which kube-apiserver also gives custom resources)
     * @param tableServed whether a Table may answer (reads of objects, not discovery)
     * @param answer what the read answers, or null when the metadata-only forms are not served
     * @return null when no media type of {@code accept} is served (a 406)
     * @throws KubeError 406 when {@code accept} first names the metadata-only form of the other
     *     answer ({@code PartialObjectMetadataList} for a get, {@code PartialObjectMetadata} for a
     *     list), which kube-apiserver negotiates and then refuses
     */
    static KubeFormat negotiate(String accept, boolean protobufServed, boolean tableServed, Answer answer)
            throws KubeError {
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
            boolean meta = "meta.k8s.io".equals(group) && ("v1".equals(version) || "v1beta1".equals(version));
            boolean partial = answer != null
                    && meta
                    && ("PartialObjectMetadata".equals(as) || "PartialObjectMetadataList".equals(as));
            switch (type) {
                case "application/json", "*/*", "application/*" -> {
                    if (as == null) {
                        return JSON;
                    }
                    if (tableServed && as.equals("Table") && meta) {
                        return TABLE;
                    }
                    if (partial) {
                        return metadata(as, answer, METADATA_JSON);
                    }
                }
                case "application/vnd.kubernetes.protobuf" -> {
                    if (as == null && protobufServed) {
                        return PROTOBUF;
                    }
                    if (partial && protobufServed) {
                        return metadata(as, answer, METADATA_PROTOBUF);
                    }
                }
                default -> {}
            }
        }
        return null;
    }

    /** {@code form}, if {@code as} names the answer's kind; else kube-apiserver's 406 of the transform. */
    private static KubeFormat metadata(String as, Answer answer, KubeFormat form) throws KubeError {
        boolean list = as.equals("PartialObjectMetadataList");
        if (list == answer.list()) {
            return form;
        }
        throw KubeError.of(
                406,
                "NotAcceptable",
                list
                        ? "you requested PartialObjectMetadataList, but the requested object is not a list ("
                                + answer.goType() + ")"
                        : "you requested PartialObjectMetadata, but the requested object is a list (" + answer.goType()
                                + ")");
    }
}

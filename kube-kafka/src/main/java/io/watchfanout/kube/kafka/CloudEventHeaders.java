package io.watchfanout.kube.kafka;

/**
 * The headers of a change-topic record: CloudEvents 1.0 attributes in the Kafka protocol binding's
 * binary mode ({@code ce_} prefix, UTF-8 values; the record's value is the event data, its
 * {@code content-type} header the data's media type), plus two extension attributes for the
 * per-object continuity check.
 */
public final class CloudEventHeaders {
    /** Unique per source: {@code <revision>-<index>} of the etcd event, {@code resync-<revision>-<index>} for a resync entry. */
    public static final String ID = "ce_id";
    /** The cluster the events come from (configured; e.g. {@code //watch-fanout/<topic prefix>}). */
    public static final String SOURCE = "ce_source";
    /** {@code io.watchfanout.kube.added}, {@code …modified} or {@code …deleted}. */
    public static final String TYPE = "ce_type";
    /** The object's path as kube-apiserver serves it ({@code /api/v1/namespaces/team-a/pods/web-0}). */
    public static final String SUBJECT = "ce_subject";
    /** When the ingester received the event from etcd, RFC 3339. */
    public static final String TIME = "ce_time";
    /** Always {@value #SPEC_VERSION_1_0}. */
    public static final String SPEC_VERSION = "ce_specversion";
    /** The media type of the value: {@code application/json}. */
    public static final String CONTENT_TYPE = "content-type";
    /** Extension: the etcd revision of the events-topic record, decimal. */
    public static final String REVISION = "ce_etcdrevision";
    /** Extension: the object's resourceVersion before this event, decimal; 0 when it did not exist. */
    public static final String PREVIOUS_RESOURCE_VERSION = "ce_prevresourceversion";
    /** Extension, on resync entries only: {@code true}. */
    public static final String RESYNC = "ce_resync";

    /** The CloudEvents specification version written. */
    public static final String SPEC_VERSION_1_0 = "1.0";
    /** The prefix of {@link #TYPE}'s values, followed by the lower-case watch event type. */
    public static final String TYPE_PREFIX = "io.watchfanout.kube.";

    private CloudEventHeaders() {}

    /** kube-apiserver's path of an object ({@code /apis/apps/v1/namespaces/ns/deployments/web}). */
    public static String objectPath(KubeWatchEvent e) {
        StringBuilder path = new StringBuilder(64);
        path.append(e.group().isEmpty() ? "/api/" : "/apis/" + e.group() + "/").append(e.version());
        if (!e.namespace().isEmpty()) {
            path.append("/namespaces/").append(e.namespace());
        }
        return path.append('/')
                .append(e.resource())
                .append('/')
                .append(e.name())
                .toString();
    }

    /** The resource named by an {@link #objectPath}: its segment before the name. */
    static String resourceOf(String objectPath) {
        int last = objectPath.lastIndexOf('/');
        int before = last <= 0 ? -1 : objectPath.lastIndexOf('/', last - 1);
        return before < 0 ? "" : objectPath.substring(before + 1, last);
    }
}

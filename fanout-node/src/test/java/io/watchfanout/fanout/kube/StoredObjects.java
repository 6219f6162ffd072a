package io.watchfanout.fanout.kube;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import java.nio.charset.StandardCharsets;

/**
 * Objects as kube-apiserver writes them into etcd, made for tests: a typed message given in
 * protobuf's JSON form (the schema's field names, {@code Time} as {@code {"seconds": N}}) wrapped
 * in the {@code k8s\0} + {@code runtime.Unknown} envelope; or the JSON of a JSON-stored object.
 */
final class StoredObjects {
    private StoredObjects() {}

    /** The stored envelope of a {@code apiVersion} {@code kind} whose message is {@code protoJson}. */
    static byte[] protobuf(String apiVersion, String kind, String protoJson) {
        Descriptor type = KubeSchema.standard()
                .type(apiVersion, kind)
                .orElseThrow(() -> new IllegalArgumentException("no schema for " + apiVersion + " " + kind));
        DynamicMessage.Builder b = DynamicMessage.newBuilder(type);
        try {
            JsonFormat.parser().merge(protoJson, b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(protoJson, e);
        }
        return envelope(apiVersion, kind, b.build().toByteArray());
    }

    /**
     * The stored envelope of {@code message}, built with client-java-proto's generated classes:
     * a field set to its zero value is on the wire, as Go's protobuf marshals every value field.
     */
    static byte[] protobuf(String apiVersion, String kind, Message message) {
        return envelope(apiVersion, kind, message.toByteArray());
    }

    private static byte[] envelope(String apiVersion, String kind, byte[] raw) {
        byte[] typeMeta =
                new ProtoWriter().string(1, apiVersion).string(2, kind).toByteArray();
        byte[] unknown = new ProtoWriter()
                .bytes(1, typeMeta)
                .bytes(2, raw)
                .string(3, "")
                .string(4, "")
                .toByteArray();
        byte[] out = new byte[4 + unknown.length];
        out[0] = 'k';
        out[1] = '8';
        out[2] = 's';
        System.arraycopy(unknown, 0, out, 4, unknown.length);
        return out;
    }

    /** A Pod as kube-apiserver stores it. */
    static byte[] pod(String namespace, String name, String node, String phase, String app) {
        return protobuf(
                "v1",
                "Pod",
                "{\"metadata\":{\"name\":\"" + name + "\",\"namespace\":\"" + namespace + "\",\"uid\":\"uid-" + name
                        + "\",\"labels\":{\"app\":\"" + app + "\"},\"creationTimestamp\":{\"seconds\":\"1700000000\"}},"
                        + "\"spec\":{\"nodeName\":\"" + node + "\",\"restartPolicy\":\"Always\","
                        + "\"containers\":[{\"name\":\"main\",\"image\":\"nginx:1.27\"}]},"
                        + "\"status\":{\"phase\":\"" + phase + "\",\"podIP\":\"10.0.0.1\","
                        + "\"containerStatuses\":[{\"name\":\"main\",\"ready\":true,\"restartCount\":0,"
                        + "\"image\":\"nginx:1.27\",\"imageID\":\"\",\"state\":{\"running\":{\"startedAt\":"
                        + "{\"seconds\":\"1700000001\"}}}}]}}");
    }

    /** A CRD of namespaced {@code widgets.example.com}, stored as JSON (as kube-apiserver stores CRDs). */
    static byte[] widgetDefinition() {
        return ("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
                        + "\"metadata\":{\"name\":\"widgets.example.com\",\"uid\":\"u-crd\","
                        + "\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},"
                        + "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
                        + "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\","
                        + "\"listKind\":\"WidgetList\",\"shortNames\":[\"wd\"]},"
                        + "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
                        + "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}},"
                        + "\"additionalPrinterColumns\":[{\"name\":\"Size\",\"type\":\"integer\",\"jsonPath\":\".spec.size\"}]}]},"
                        + "\"status\":{\"conditions\":[{\"type\":\"Established\",\"status\":\"True\"}],"
                        + "\"acceptedNames\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},\"storedVersions\":[\"v1\"]}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** A Widget, stored as JSON. */
    static byte[] widget(String namespace, String name, int size) {
        return ("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"" + name
                        + "\",\"namespace\":\"" + namespace + "\",\"uid\":\"u-" + name
                        + "\",\"creationTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{\"size\":" + size + "}}")
                .getBytes(StandardCharsets.UTF_8);
    }
}

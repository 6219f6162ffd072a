package io.watchfanout.bench.jmh;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Setup;

/**
 * The cost of one Kubernetes watch frame of a pod as kube-apiserver stores it (protobuf envelope,
 * ~4 KiB with labels, annotations, managed fields, two containers and status): the node's JSON
 * written from the stored bytes ({@link KubeWatchFrames#json}), its protobuf frame spliced from
 * them ({@link KubeWatchFrames#protobuf}), the library way (parse with {@code DynamicMessage},
 * print with {@code JsonFormat}: proto3 JSON, not even Kubernetes' form) and, for scale, the
 * node's {@code /v1/watch} JSON frame of the same bytes as an etcd value (base64).
 *
 * <p>Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is bytes allocated per frame.
 */
public class KubeEncodingBench extends NanosPerOperation {
    private final KubeWatchFrames frames = new KubeWatchFrames(KubeSchema.standard());
    private byte[] stored;
    private StoredObject object;
    private Descriptor podType;
    private JsonFormat.Printer printer;
    private FrameEncoder encoder;
    private Event etcdEvent;

    @Setup
    public void setup() {
        podType = KubeSchema.standard().type("v1", "Pod").orElseThrow();
        stored = StorageEnvelope.wrap("v1", "Pod", pod(podType));
        object = StoredObject.of(stored, 0, stored.length);
        printer = JsonFormat.printer().omittingInsignificantWhitespace();
        encoder = new FrameEncoder();
        KeyValue kv =
                BenchEvents.kv(BenchEvents.key("/registry/pods/shop/web-7f9c-00042"), ByteString.copyFrom(stored), 100);
        etcdEvent = BenchEvents.put(kv, kv, 100);
    }

    /** Bytes of the stored pod (printed once per run by JMH's setup log). */
    public int storedBytes() {
        return stored.length;
    }

    /** The node's Kubernetes JSON watch frame, from the stored protobuf. */
    @Benchmark
    public byte[] kubeJson() throws UndecodableObjectException {
        return frames.json(KubeWatchFrames.EventType.MODIFIED, stored, 0, stored.length, 12345)
                .bytes();
    }

    /** The node's Kubernetes protobuf watch frame: the stored bytes with the resourceVersion spliced in. */
    @Benchmark
    public byte[] kubeProtobuf() throws UndecodableObjectException {
        return frames.protobuf(KubeWatchFrames.EventType.MODIFIED, stored, 0, stored.length, 12345);
    }

    /** The library way: parse the object, print proto3 JSON (no Kubernetes forms, no resourceVersion). */
    @Benchmark
    public byte[] dynamicMessageJsonFormat() throws Exception {
        DynamicMessage pod =
                DynamicMessage.parseFrom(podType, ByteString.copyFrom(stored, object.rawOffset(), object.rawLength()));
        return printer.print(pod).getBytes(StandardCharsets.UTF_8);
    }

    /** For scale: the node's /v1/watch JSON frame of the same value as raw etcd bytes (base64). */
    @Benchmark
    public ByteBuffer etcdValueJson() {
        return encoder.event(new CachedEvent(etcdEvent, 0), WatchEventEncodings.JSON, FrameKind.EVENT);
    }

    /** A pod shaped like a kubelet-managed one: ~4 KiB stored. */
    static Message pod(Descriptor pod) {
        Msg meta = new Msg(pod.findFieldByName("metadata").getMessageType())
                .set("name", "web-7f9c-00042")
                .set("generateName", "web-7f9c-")
                .set("namespace", "shop")
                .set("uid", "5f0b6d0c-3a47-4c39-9f0e-7a1c4e8f2b11")
                .set("resourceVersion", "")
                .map("labels", "app", "web")
                .map("labels", "pod-template-hash", "7f9c6d8b5")
                .map("labels", "app.kubernetes.io/part-of", "shop")
                .map("annotations", "prometheus.io/scrape", "true")
                .map("annotations", "kubectl.kubernetes.io/default-container", "web");
        Msg spec = new Msg(pod.findFieldByName("spec").getMessageType())
                .set("nodeName", "node-17")
                .set("serviceAccountName", "web")
                .set("restartPolicy", "Always")
                .set("schedulerName", "default-scheduler");
        for (String name : new String[] {"web", "sidecar"}) {
            Msg c = spec.add("containers")
                    .set("name", name)
                    .set("image", "registry.example.com/shop/" + name + ":1.4.2")
                    .set("imagePullPolicy", "IfNotPresent")
                    .set("terminationMessagePath", "/dev/termination-log");
            for (int i = 0; i < 8; i++) {
                c.add("env").set("name", "SETTING_" + i).set("value", "value-of-setting-number-" + i);
            }
            c.add("ports").set("containerPort", 8080).set("protocol", "TCP").set("name", "http");
            c.child("resources")
                    .map("requests", "cpu", quantity(c, "100m"))
                    .map("requests", "memory", quantity(c, "128Mi"));
        }
        Msg status = new Msg(pod.findFieldByName("status").getMessageType())
                .set("phase", "Running")
                .set("podIP", "10.244.17.42")
                .set("hostIP", "192.0.2.17");
        for (String type : new String[] {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
            status.add("conditions").set("type", type).set("status", "True");
        }
        for (String name : new String[] {"web", "sidecar"}) {
            status.add("containerStatuses")
                    .set("name", name)
                    .set("ready", true)
                    .set("restartCount", 0)
                    .set("image", "registry.example.com/shop/" + name + ":1.4.2")
                    .set("imageID", "registry.example.com/shop/" + name + "@sha256:" + "ab".repeat(32))
                    .set("containerID", "containerd://" + "cd".repeat(32));
        }
        for (int i = 0; i < 3; i++) {
            meta.add("managedFields")
                    .set("manager", i == 0 ? "kube-controller-manager" : "kubelet")
                    .set("operation", "Update")
                    .set("apiVersion", "v1")
                    .set("fieldsType", "FieldsV1")
                    .child("fieldsV1")
                    .set(
                            "Raw",
                            ByteString.copyFromUtf8("{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},"
                                    + "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"web\\\"}\":{\".\":{}}}}}"));
        }
        return DynamicMessage.newBuilder(pod)
                .setField(pod.findFieldByName("metadata"), meta.build())
                .setField(pod.findFieldByName("spec"), spec.build())
                .setField(pod.findFieldByName("status"), status.build())
                .build();
    }

    private static Message quantity(Msg container, String value) {
        Descriptor q = container
                .type
                .findFieldByName("resources")
                .getMessageType()
                .findFieldByName("requests")
                .getMessageType()
                .findFieldByName("value")
                .getMessageType();
        return DynamicMessage.newBuilder(q)
                .setField(q.findFieldByName("string"), value)
                .build();
    }

    /** A DynamicMessage builder addressed by field name. */
    private static final class Msg {
        final Descriptor type;
        final DynamicMessage.Builder builder;
        private final Map<String, List<Msg>> repeated = new LinkedHashMap<>();
        private final Map<String, Msg> children = new LinkedHashMap<>();

        Msg(Descriptor type) {
            this.type = type;
            this.builder = DynamicMessage.newBuilder(type);
        }

        Msg set(String name, Object value) {
            builder.setField(type.findFieldByName(name), value);
            return this;
        }

        Msg map(String name, String key, Object value) {
            FieldDescriptor f = type.findFieldByName(name);
            Descriptor entry = f.getMessageType();
            builder.addRepeatedField(
                    f,
                    DynamicMessage.newBuilder(entry)
                            .setField(entry.findFieldByName("key"), key)
                            .setField(entry.findFieldByName("value"), value)
                            .build());
            return this;
        }

        Msg add(String name) {
            Msg m = new Msg(type.findFieldByName(name).getMessageType());
            repeated.computeIfAbsent(name, k -> new ArrayList<>()).add(m);
            return m;
        }

        Msg child(String name) {
            return children.computeIfAbsent(
                    name, n -> new Msg(type.findFieldByName(n).getMessageType()));
        }

        DynamicMessage build() {
            repeated.forEach(
                    (name, list) -> list.forEach(m -> builder.addRepeatedField(type.findFieldByName(name), m.build())));
            children.forEach((name, m) -> builder.setField(type.findFieldByName(name), m.build()));
            return builder.build();
        }
    }
}

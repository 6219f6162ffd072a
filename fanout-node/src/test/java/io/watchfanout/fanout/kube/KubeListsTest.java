package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ContinueToken.Form;
import io.watchfanout.kube.codec.CustomResources;
import io.watchfanout.kube.codec.KubeListWriter;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.ProtoJsonWriter;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** List pages, continue tokens and discovery documents as kubectl and client-go read them. */
class KubeListsTest {
    private final KubeResources resources = KubeResources.builtIn("/registry");
    private final KubeResource pods = resources.byPlural("", "v1", "pods").orElseThrow();
    private final KubeListWriter lists = new KubeListWriter(KubeSchema.standard(), ProtoJsonWriter.create());

    @Test
    void jsonListCarriesListMetaAndItemsWithoutTypeMeta() throws Exception {
        List<KubeListWriter.Item> items = pods(300);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<Integer> chunks = new ArrayList<>();
        lists.json(pods, items, 900, "tok", 12, (b, off, len) -> {
            out.write(b, off, len);
            chunks.add(len);
        });
        JsonObject list =
                JsonParser.parseString(out.toString(StandardCharsets.UTF_8)).getAsJsonObject();
        assertThat(list.get("kind").getAsString()).isEqualTo("PodList");
        assertThat(list.get("apiVersion").getAsString()).isEqualTo("v1");
        JsonObject meta = list.getAsJsonObject("metadata");
        assertThat(meta.get("resourceVersion").getAsString()).isEqualTo("900");
        assertThat(meta.get("continue").getAsString()).isEqualTo("tok");
        assertThat(meta.get("remainingItemCount").getAsLong()).isEqualTo(12);
        JsonArray array = list.getAsJsonArray("items");
        assertThat(array).hasSize(300);
        for (int i = 0; i < 300; i++) {
            JsonObject item = array.get(i).getAsJsonObject();
            assertThat(item.has("kind")).isFalse();
            assertThat(item.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                    .isEqualTo(Long.toString(100 + i));
        }
        // Streamed through a bounded buffer: 64 KiB plus at most one item (300 pods are several buffers).
        assertThat(chunks.size()).isGreaterThan(1);
        assertThat(chunks).allMatch(len -> len < 64 * 1024 + 32 * 1024);
    }

    @Test
    void itemsViewedInsideTheCachesChunksRenderAsWholeArraysDo() throws Exception {
        List<KubeListWriter.Item> items = pods(40);
        // The cache keeps values as views into large chunks: lay the items out in one array with
        // other bytes around each, and read them through a key-value as the cache hands them out.
        byte[] chunk = new byte[items.stream().mapToInt(i -> i.length() + 7).sum() + 7];
        java.util.Arrays.fill(chunk, (byte) 0x5a);
        List<KubeListWriter.Item> viewed = new ArrayList<>();
        int pos = 7;
        for (KubeListWriter.Item item : items) {
            System.arraycopy(item.value(), 0, chunk, pos, item.length());
            io.watchfanout.schema.v1.KeyValue kv = io.watchfanout.schema.v1.KeyValue.newBuilder()
                    .setValue(com.google.protobuf.UnsafeByteOperations.unsafeWrap(chunk, pos, item.length()))
                    .setModRevision(item.modRevision())
                    .build();
            KubeListWriter.Item view = KubeListWriter.Item.of(kv, null);
            assertThat(view.value()).isSameAs(chunk); // no copy
            viewed.add(view);
            pos += item.length() + 7;
        }
        for (boolean protobuf : new boolean[] {false, true}) {
            ByteArrayOutputStream whole = new ByteArrayOutputStream();
            ByteArrayOutputStream views = new ByteArrayOutputStream();
            if (protobuf) {
                lists.protobuf(pods, items, 900, "tok", 3, (b, off, len) -> whole.write(b, off, len));
                lists.protobuf(pods, viewed, 900, "tok", 3, (b, off, len) -> views.write(b, off, len));
            } else {
                lists.json(pods, items, 900, "tok", 3, (b, off, len) -> whole.write(b, off, len));
                lists.json(pods, viewed, 900, "tok", 3, (b, off, len) -> views.write(b, off, len));
            }
            assertThat(views.toByteArray()).isEqualTo(whole.toByteArray());
        }
    }

    @Test
    void itemsOfEventsInTheWindowAreRenderedOncePerEventAndListedAsRenderedAnew() throws Exception {
        FrameEncoder encoder = new FrameEncoder();
        KubeListWriter memoizing = new KubeListWriter(KubeSchema.standard(), ProtoJsonWriter.create());
        List<KubeListWriter.Item> plain = pods(30);
        List<KubeListWriter.Item> withEvents = new ArrayList<>();
        for (int i = 0; i < plain.size(); i++) {
            KubeListWriter.Item item = withEvent("/registry/pods/ns/p-" + i, plain.get(i), encoder);
            // Every third object has left the window: rendered each time.
            withEvents.add(i % 3 == 0 ? new KubeListWriter.Item(item.value(), item.modRevision()) : item);
        }
        for (boolean protobuf : new boolean[] {false, true}) {
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            if (protobuf) {
                lists.protobuf(pods, plain, 900, "tok", 3, (b, off, len) -> expected.write(b, off, len));
            } else {
                lists.json(pods, plain, 900, "tok", 3, (b, off, len) -> expected.write(b, off, len));
            }
            for (int round = 0; round < 3; round++) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                if (protobuf) {
                    memoizing.protobuf(pods, withEvents, 900, "tok", 3, (b, off, len) -> out.write(b, off, len));
                } else {
                    memoizing.json(pods, withEvents, 900, "tok", 3, (b, off, len) -> out.write(b, off, len));
                }
                assertThat(out.toByteArray()).isEqualTo(expected.toByteArray());
            }
            Encoding items = protobuf ? KubeListItems.PROTOBUF_ITEMS : KubeListItems.JSON_ITEMS;
            assertThat(encoder.encodes(items, FrameKind.INITIAL)).isEqualTo(20); // once per event, three lists
        }
    }

    @Test
    void anUndecodableItemIsNamedByItsIndexInThePage() {
        List<KubeListWriter.Item> items = new ArrayList<>(pods(3));
        items.add(new KubeListWriter.Item(new byte[] {'k', '8', 's', 0, 1, 2, 3}, 7));
        assertThatThrownBy(() -> lists.json(pods, items, 9, null, -1, (b, off, len) -> {}))
                .isInstanceOfSatisfying(
                        UndecodableObjectException.class,
                        e -> assertThat(e.item()).isEqualTo(3));
        assertThatThrownBy(() -> lists.protobuf(pods, items, 9, null, -1, (b, off, len) -> {}))
                .isInstanceOfSatisfying(
                        UndecodableObjectException.class,
                        e -> assertThat(e.item()).isEqualTo(3));
    }

    @Test
    void protobufListIsAnEnvelopeOfListMetaAndBareItems() throws Exception {
        List<KubeListWriter.Item> items = pods(50);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        lists.protobuf(pods, items, 900, null, -1, (b, off, len) -> out.write(b, off, len));
        byte[] bytes = out.toByteArray();
        StoredObject envelope = StoredObject.of(bytes, 0, bytes.length);
        assertThat(envelope.kind()).isEqualTo("PodList");
        assertThat(envelope.rawOffset() + envelope.rawLength()).isEqualTo(bytes.length - 4);
        DynamicMessage list = StoredObjects.decode(bytes);
        assertThat(StoredObjects.resourceVersion(list)).isEqualTo("900");
        FieldDescriptor itemsField = list.getDescriptorForType().findFieldByName("items");
        assertThat(list.getRepeatedFieldCount(itemsField)).isEqualTo(50);
        assertThat(StoredObjects.resourceVersion((DynamicMessage) list.getRepeatedField(itemsField, 49)))
                .isEqualTo("149");
    }

    @Test
    void aCustomResourceHasNoProtobufList() {
        byte[] widget = "{\"kind\":\"Widget\",\"apiVersion\":\"example.com/v1\",\"metadata\":{\"name\":\"w\"}}"
                .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> lists.protobuf(
                        pods, List.of(new KubeListWriter.Item(widget, 3)), 5, null, -1, (b, off, len) -> {}))
                .isInstanceOf(UndecodableObjectException.class);
    }

    @Test
    void continueTokensRoundTripAndBadOnesAreRefusedInKubeApiserversWords() {
        ContinueToken token = new ContinueToken(77, ByteString.copyFromUtf8("default/web-3\u0000"), 40);
        assertThat(ContinueToken.decode(token.encode(Form.KUBERNETES), Form.KUBERNETES))
                .isEqualTo(token);
        assertThat(ContinueToken.decode(
                                new ContinueToken(77, ByteString.copyFromUtf8("a"), -1).encode(Form.KUBERNETES),
                                Form.KUBERNETES)
                        .remaining())
                .isEqualTo(-1);
        for (String bad : List.of(
                "%%%",
                "bm90IGpzb24",
                base64("{\"v\":\"x\",\"rv\":1,\"start\":\"a\"}"),
                base64("{\"v\":\"meta.k8s.io/v1\",\"rv\":0,\"start\":\"a\"}"),
                base64("{\"v\":\"meta.k8s.io/v1\",\"rv\":5,\"start\":\"/etc\"}"))) {
            assertThatThrownBy(() -> ContinueToken.decode(bad, Form.KUBERNETES))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("continue key is not valid");
        }
    }

    @Test
    void discoveryAnnouncesEveryResourceWithReadVerbsInBothForms() {
        KubeDiscovery discovery = new KubeDiscovery(resources);
        JsonObject core = json(discovery.resourceList("v1"));
        assertThat(core.get("groupVersion").getAsString()).isEqualTo("v1");
        JsonObject podResource = core.getAsJsonArray("resources").get(0).getAsJsonObject();
        assertThat(podResource.get("name").getAsString()).isEqualTo("pods");
        assertThat(podResource.get("namespaced").getAsBoolean()).isTrue();
        assertThat(podResource.getAsJsonArray("verbs").toString()).isEqualTo("[\"get\",\"list\",\"watch\"]");
        assertThat(podResource.getAsJsonArray("shortNames").get(0).getAsString())
                .isEqualTo("po");

        JsonObject groups = json(discovery.legacyGroups());
        assertThat(groups.get("kind").getAsString()).isEqualTo("APIGroupList");
        assertThat(groups.getAsJsonArray("groups").toString()).contains("\"apps/v1\"", "rbac.authorization.k8s.io");
        assertThat(discovery.resourceList("apps/v1")).isNotNull();
        assertThat(discovery.resourceList("nope/v1")).isNull();

        JsonObject aggregated = json(discovery.aggregatedGroups());
        assertThat(aggregated.get("kind").getAsString()).isEqualTo("APIGroupDiscoveryList");
        assertThat(aggregated.toString()).contains("\"scope\":\"Namespaced\"", "\"responseKind\"");
        assertThat(json(discovery.aggregatedCore()).getAsJsonArray("items")).hasSize(1);
        assertThat(json(discovery.legacyCore())
                        .getAsJsonArray("versions")
                        .get(0)
                        .getAsString())
                .isEqualTo("v1");
    }

    @Test
    void builtInItemsCarryNoTypeMetaWhetherStoredAsJsonOrProtobuf() throws Exception {
        KubeResource configMaps = resources.byPlural("", "v1", "configmaps").orElseThrow();
        byte[] asJson = ("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"from-json\","
                        + "\"namespace\":\"default\"},\"data\":{\"k\":\"v\"}}")
                .getBytes(StandardCharsets.UTF_8);
        byte[] asProtobuf = StoredObjects.protobuf(
                "v1",
                "ConfigMap",
                "{\"metadata\":{\"name\":\"from-pb\",\"namespace\":\"default\"},\"data\":{\"k\":\"v\"}}");
        FrameEncoder encoder = new FrameEncoder();
        KubeListWriter memoizing = new KubeListWriter(KubeSchema.standard(), ProtoJsonWriter.create());
        List<KubeListWriter.Item> items =
                List.of(new KubeListWriter.Item(asJson, 5), new KubeListWriter.Item(asProtobuf, 6));
        // Rendered anew and memoized on the events that wrote them: the same items either way.
        List<KubeListWriter.Item> withEvents = List.of(
                withEvent("/registry/configmaps/default/from-json", items.get(0), encoder),
                withEvent("/registry/configmaps/default/from-pb", items.get(1), encoder));
        for (KubeListWriter writer : List.of(lists, memoizing)) {
            for (List<KubeListWriter.Item> page : List.of(items, withEvents)) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                writer.json(configMaps, page, 9, null, -1, (b, off, len) -> out.write(b, off, len));
                JsonObject list = json(out.toByteArray());
                assertThat(list.get("kind").getAsString()).isEqualTo("ConfigMapList");
                assertThat(list.getAsJsonArray("items"))
                        .containsExactly(
                                JsonParser.parseString(
                                        "{\"metadata\":{\"name\":\"from-json\",\"namespace\":\"default\","
                                                + "\"resourceVersion\":\"5\"},\"data\":{\"k\":\"v\"}}"),
                                JsonParser.parseString("{\"metadata\":{\"name\":\"from-pb\",\"namespace\":\"default\","
                                        + "\"resourceVersion\":\"6\"},\"data\":{\"k\":\"v\"}}"));
            }
        }
    }

    @Test
    void customResourceItemsKeepTheirTypeMeta() throws Exception {
        KubeResource widgets = CustomResources.fromStoredDefinition(StoredObjects.widgetDefinition())
                .orElseThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        lists.json(
                widgets,
                List.of(new KubeListWriter.Item(StoredObjects.widget("default", "w", 3), 4)),
                9,
                null,
                -1,
                (b, off, len) -> out.write(b, off, len));
        JsonObject item = json(out.toByteArray()).getAsJsonArray("items").get(0).getAsJsonObject();
        assertThat(item.get("kind").getAsString()).isEqualTo("Widget");
        assertThat(item.get("apiVersion").getAsString()).isEqualTo("example.com/v1");
    }

    /** {@code item} as the cache hands it out while the event that wrote it is in the window. */
    private static KubeListWriter.Item withEvent(String key, KubeListWriter.Item item, FrameEncoder encoder) {
        io.watchfanout.schema.v1.KeyValue kv = io.watchfanout.schema.v1.KeyValue.newBuilder()
                .setKey(com.google.protobuf.ByteString.copyFromUtf8(key))
                .setValue(com.google.protobuf.ByteString.copyFrom(item.value()))
                .setModRevision(item.modRevision())
                .setVersion(1)
                .build();
        io.watchfanout.schema.v1.Event put = io.watchfanout.schema.v1.Event.newBuilder()
                .setType(io.watchfanout.schema.v1.Event.Type.PUT)
                .setKv(kv)
                .setRevision(item.modRevision())
                .build();
        return KubeListItems.item(kv, new CachedEvent(put, 0), encoder);
    }

    private static List<KubeListWriter.Item> pods(int n) {
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        List<KubeListWriter.Item> items = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            items.add(new KubeListWriter.Item(pod, 100 + i));
        }
        return items;
    }

    private static JsonObject json(byte[] bytes) {
        return JsonParser.parseString(new String(bytes, StandardCharsets.UTF_8)).getAsJsonObject();
    }

    private static String base64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}

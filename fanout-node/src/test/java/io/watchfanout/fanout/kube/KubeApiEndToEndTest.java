package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.DynamicMessage;
import io.watchfanout.fanout.e2e.Stack;
import io.watchfanout.kube.codec.KubeFixtures;
import io.watchfanout.kube.codec.ProtoJsonWriterTest;
import io.watchfanout.kube.codec.RequiresKubeFixtures;
import io.watchfanout.kube.codec.ResourceVersionSplice;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Kubernetes API of a node end to end: real etcd, real Kafka, the real ingester jar and a
 * fan-out node as child processes; kube-apiserver's objects written into etcd under their keys as
 * kube-apiserver stores them, read back over HTTP as its clients read them.
 */
class KubeApiEndToEndTest extends KubeStackTest {

    KubeApiEndToEndTest(EtcdServer etcdServer, KafkaBroker kafka) {
        super(etcdServer, kafka);
    }

    private Stack.Node startNode(String... extra) {
        return start("node-a", extra);
    }

    static void awaitNode(Stack.Node node, long revision) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> Stack.metrics(node).get("watchfanout_cache_revision") >= revision);
    }

    static JsonObject json(HttpResponse<byte[]> r) {
        return JsonParser.parseString(new String(r.body(), StandardCharsets.UTF_8))
                .getAsJsonObject();
    }

    static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    @Test
    @RequiresKubeFixtures
    void everyFixtureIsServedAsKubeApiserverServesItInJsonAndProtobuf() throws Exception {
        Stack.Node node = startNode();
        KubeResources resources = KubeResources.builtIn(registry);
        Map<String, Long> revisions = new HashMap<>();
        Map<String, KubeResource> served = new HashMap<>();
        long last = 0;
        for (String name : KubeFixtures.names()) {
            byte[] stored = KubeFixtures.protobuf(name);
            StoredObject object = StoredObject.of(stored, 0, stored.length);
            if (object.apiVersion().equals("events.k8s.io/v1")) {
                continue; // kube-apiserver stores these as core v1 Events
            }
            KubeResource resource = resources.all().stream()
                    .filter(r -> r.apiVersion().equals(object.apiVersion())
                            && r.kind().equals(object.kind()))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no resource serves " + name));
            served.put(name, resource);
            String key = resource.storagePath() + "/" + (resource.namespaced() ? "namespaceValue/" : "") + "nameValue";
            last = put(key, stored);
            revisions.put(name, last);
        }
        awaitNode(node, last);
        KubeNodeClient client = new KubeNodeClient(node);
        int warned = 0;
        for (Map.Entry<String, KubeResource> e : served.entrySet()) {
            String name = e.getKey();
            KubeResource resource = e.getValue();
            String base = (resource.group().isEmpty() ? "/api/v1" : "/apis/" + resource.apiVersion())
                    + (resource.namespaced() ? "/namespaces/namespaceValue/" : "/")
                    + resource.plural();
            long rv = revisions.get(name);

            HttpResponse<byte[]> asJson = client.get(base + "/nameValue", KubeNodeClient.JSON);
            assertThat(asJson.statusCode()).as(name + ": " + text(asJson)).isEqualTo(200);
            JsonObject expected =
                    JsonParser.parseString(KubeFixtures.json(name)).getAsJsonObject();
            expected.getAsJsonObject("metadata").addProperty("resourceVersion", Long.toString(rv));
            List<String> wrong = new ArrayList<>();
            List<String> missing = new ArrayList<>();
            ProtoJsonWriterTest.compare("", json(asJson), expected, wrong, missing);
            assertThat(wrong)
                    .as(name + ": fields whose JSON differs from kube-apiserver's")
                    .isEmpty();
            boolean warning = asJson.headers().firstValue("Warning").isPresent();
            if (warning) {
                warned++;
                assertThat(asJson.headers().firstValue("Warning").orElseThrow()).startsWith("299 - \"");
                assertThat(missing)
                        .as(name + ": a warning, so fields are missing")
                        .isNotEmpty();
            } else {
                assertThat(missing)
                        .as(name + ": no warning, so nothing is missing")
                        .isEmpty();
            }

            byte[] stored = KubeFixtures.protobuf(name);
            byte[] spliced = ResourceVersionSplice.of(
                            stored, 0, stored.length, StoredObject.of(stored, 0, stored.length), rv)
                    .envelope();
            HttpResponse<byte[]> asProto = client.get(base + "/nameValue", KubeNodeClient.PROTOBUF);
            assertThat(asProto.statusCode()).as(name).isEqualTo(200);
            assertThat(asProto.headers().firstValue("Content-Type")).hasValue(KubeNodeClient.PROTOBUF);
            assertThat(asProto.body())
                    .as(name + ": the stored bytes with the resourceVersion set")
                    .isEqualTo(spliced);
            assertThat(StoredObjects.resourceVersion(StoredObjects.decode(asProto.body())))
                    .isEqualTo(Long.toString(rv));

            HttpResponse<byte[]> list = client.get(base, KubeNodeClient.PROTOBUF);
            assertThat(list.statusCode()).as(name).isEqualTo(200);
            DynamicMessage decoded = StoredObjects.decode(list.body());
            assertThat(decoded.getDescriptorForType().getName()).isEqualTo(resource.listKind());
            List<?> items =
                    (List<?>) decoded.getField(decoded.getDescriptorForType().findFieldByName("items"));
            assertThat(items).as(name).hasSize(1);
            assertThat(((DynamicMessage) items.get(0)).toByteArray())
                    .as(name + ": the list item is the stored object with its resourceVersion")
                    .isEqualTo(DynamicMessage.parseFrom(
                                    ((DynamicMessage) items.get(0)).getDescriptorForType(),
                                    ResourceVersionSplice.of(
                                                    stored,
                                                    0,
                                                    stored.length,
                                                    StoredObject.of(stored, 0, stored.length),
                                                    rv)
                                            .object())
                            .toByteArray());

            HttpResponse<byte[]> jsonList = client.get(base, KubeNodeClient.JSON);
            assertThat(jsonList.statusCode()).isEqualTo(200);
            JsonObject l = json(jsonList);
            assertThat(l.get("kind").getAsString()).isEqualTo(resource.listKind());
            assertThat(Long.parseLong(
                            l.getAsJsonObject("metadata").get("resourceVersion").getAsString()))
                    .isGreaterThanOrEqualTo(last);
            JsonObject item = l.getAsJsonArray("items").get(0).getAsJsonObject();
            assertThat(item.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                    .isEqualTo(Long.toString(rv));
        }
        assertThat(warned)
                .as("fixtures with fields newer than the node's schema (Pod, Deployment, ...)")
                .isPositive();
        assertThat(Stack.metrics(node).get("watchfanout_kube_unknown_fields_total"))
                .isPositive();
    }

    @Test
    void objectsStoredAsJsonAndAsProtobufListAlikeAndKeepTheirTypeInGetsAndWatches() throws Exception {
        Stack.Node node = startNode();
        long first = put(
                "configmaps/default/from-json",
                ("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"from-json\","
                                + "\"namespace\":\"default\"},\"data\":{\"k\":\"v\"}}")
                        .getBytes(StandardCharsets.UTF_8));
        long last = put(
                "configmaps/default/from-pb",
                StoredObjects.protobuf(
                        "v1",
                        "ConfigMap",
                        "{\"metadata\":{\"name\":\"from-pb\",\"namespace\":\"default\"},\"data\":{\"k\":\"v\"}}"));
        awaitNode(node, last);
        KubeNodeClient client = new KubeNodeClient(node);

        // A typed list: no item carries kind or apiVersion, however it was stored.
        JsonObject list = json(client.get("/api/v1/namespaces/default/configmaps", KubeNodeClient.JSON));
        assertThat(names(list)).containsExactly("from-json", "from-pb");
        for (JsonElement item : list.getAsJsonArray("items")) {
            assertThat(item.getAsJsonObject().keySet()).containsExactly("metadata", "data");
        }
        // One object, and a watch event's object: both carry them.
        for (String name : List.of("from-json", "from-pb")) {
            JsonObject got = json(client.get("/api/v1/namespaces/default/configmaps/" + name, KubeNodeClient.JSON));
            assertThat(got.get("kind").getAsString()).isEqualTo("ConfigMap");
            assertThat(got.get("apiVersion").getAsString()).isEqualTo("v1");
        }
        String events = text(client.get(
                "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" + (first - 1) + "&timeoutSeconds=2",
                KubeNodeClient.JSON));
        List<JsonObject> objects = new ArrayList<>();
        for (String line : events.split("\n")) {
            objects.add(JsonParser.parseString(line).getAsJsonObject().getAsJsonObject("object"));
        }
        assertThat(objects).hasSize(2).allSatisfy(o -> {
            assertThat(o.get("kind").getAsString()).isEqualTo("ConfigMap");
            assertThat(o.get("apiVersion").getAsString()).isEqualTo("v1");
        });
    }

    @Test
    void pagesSelectorsAndBadInputAnswerAsKubeApiserver() throws Exception {
        Stack.Node node = startNode("--history-max-events", "20", "--resource-version-wait", "5s");
        long last = 0;
        for (int i = 0; i < 7; i++) {
            last = put(
                    "pods/a/p" + i,
                    StoredObjects.pod(
                            "a",
                            "p" + i,
                            i % 2 == 0 ? "node-1" : "node-2",
                            i < 5 ? "Running" : "Pending",
                            i < 3 ? "web" : "db"));
        }
        awaitNode(node, last);
        KubeNodeClient client = new KubeNodeClient(node);

        // Pages at one revision, chained by continue tokens, with remainingItemCount.
        HttpResponse<byte[]> first = client.get("/api/v1/namespaces/a/pods?limit=3", KubeNodeClient.JSON);
        assertThat(first.statusCode()).as(text(first)).isEqualTo(200);
        JsonObject page = json(first);
        String revision =
                page.getAsJsonObject("metadata").get("resourceVersion").getAsString();
        assertThat(page.getAsJsonObject("metadata").get("remainingItemCount").getAsLong())
                .isEqualTo(4);
        List<String> names = names(page);
        String token = page.getAsJsonObject("metadata").get("continue").getAsString();
        while (token != null) {
            put("pods/a/zz-later", StoredObjects.pod("a", "zz-later", "node-1", "Running", "web"));
            JsonObject next = json(client.get(
                    "/api/v1/namespaces/a/pods?limit=3&continue=" + URLEncoder.encode(token, StandardCharsets.UTF_8),
                    KubeNodeClient.JSON));
            assertThat(next.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                    .isEqualTo(revision);
            names.addAll(names(next));
            JsonElement c = next.getAsJsonObject("metadata").get("continue");
            token = c == null ? null : c.getAsString();
        }
        assertThat(names).containsExactly("p0", "p1", "p2", "p3", "p4", "p5", "p6");

        // Selectors, also across pages.
        assertThat(names(json(
                        client.get("/api/v1/pods?labelSelector=app%3Dweb%2Cname+notin+%28x%29", KubeNodeClient.JSON))))
                .containsExactly("p0", "p1", "p2", "zz-later");
        assertThat(names(json(
                        client.get("/api/v1/pods?labelSelector=app+in+%28db%29%2C%21missing", KubeNodeClient.JSON))))
                .containsExactly("p3", "p4", "p5", "p6");
        assertThat(names(json(client.get(
                        "/api/v1/namespaces/a/pods?fieldSelector=spec.nodeName%3Dnode-1%2Cstatus.phase%21%3DPending",
                        KubeNodeClient.JSON))))
                .containsExactly("p0", "p2", "p4", "zz-later");
        JsonObject selectedPage =
                json(client.get("/api/v1/pods?limit=2&fieldSelector=metadata.name%21%3Dp0", KubeNodeClient.JSON));
        assertThat(names(selectedPage)).containsExactly("p1", "p2");
        assertThat(selectedPage.getAsJsonObject("metadata").has("remainingItemCount"))
                .isFalse();

        // A continue token whose revision left the history: 410 with a token that goes on at the latest state.
        String old = json(client.get("/api/v1/namespaces/a/pods?limit=2", KubeNodeClient.JSON))
                .getAsJsonObject("metadata")
                .get("continue")
                .getAsString();
        for (int i = 0; i < 30; i++) {
            last = put(
                    "configmaps/a/churn",
                    ("{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                                    + "\"churn\",\"namespace\":\"a\"},\"data\":{\"i\":\"" + i + "\"}}")
                            .getBytes(StandardCharsets.UTF_8));
        }
        awaitNode(node, last);
        HttpResponse<byte[]> expired = client.get(
                "/api/v1/namespaces/a/pods?limit=2&continue=" + URLEncoder.encode(old, StandardCharsets.UTF_8),
                KubeNodeClient.JSON);
        assertThat(expired.statusCode()).as(text(expired)).isEqualTo(410);
        JsonObject status = json(expired);
        assertThat(status.get("reason").getAsString()).isEqualTo("Expired");
        String fresh = status.getAsJsonObject("metadata").get("continue").getAsString();
        HttpResponse<byte[]> resumed = client.get(
                "/api/v1/namespaces/a/pods?limit=20&continue=" + URLEncoder.encode(fresh, StandardCharsets.UTF_8),
                KubeNodeClient.JSON);
        assertThat(resumed.statusCode()).as(text(resumed)).isEqualTo(200);
        assertThat(names(json(resumed))).containsExactly("p2", "p3", "p4", "p5", "p6", "zz-later");

        // resourceVersion: an exact revision gone is 410; a future one 504 with kube-apiserver's cause.
        HttpResponse<byte[]> gone = client.get(
                "/api/v1/pods?resourceVersion=" + revision + "&resourceVersionMatch=Exact", KubeNodeClient.JSON);
        assertThat(gone.statusCode()).as(text(gone)).isEqualTo(410);
        HttpResponse<byte[]> future = client.get("/api/v1/pods?resourceVersion=" + (last + 1000), KubeNodeClient.JSON);
        assertThat(future.statusCode()).as(text(future)).isEqualTo(504);
        assertThat(future.headers().firstValue("Retry-After")).isPresent();
        JsonObject tooLarge = json(future);
        assertThat(tooLarge.get("reason").getAsString()).isEqualTo("Timeout");
        assertThat(tooLarge.get("message").getAsString()).startsWith("Too large resource version: " + (last + 1000));
        assertThat(tooLarge.getAsJsonObject("details")
                        .getAsJsonArray("causes")
                        .get(0)
                        .getAsJsonObject()
                        .get("reason")
                        .getAsString())
                .isEqualTo("ResourceVersionTooLarge");
        assertThat(client.get("/api/v1/pods?resourceVersion=0&limit=99999999999999", KubeNodeClient.JSON)
                        .statusCode())
                .isEqualTo(200);

        // Refusals: each a Status with kube-apiserver's code and reason.
        assertStatus(client.get("/api/v1/pods?resourceVersion=abc", KubeNodeClient.JSON), 400, "BadRequest");
        assertStatus(client.get("/api/v1/pods?resourceVersionMatch=Exact", KubeNodeClient.JSON), 422, "Invalid");
        assertStatus(client.get("/api/v1/pods?continue=garbage", KubeNodeClient.JSON), 400, "BadRequest");
        assertStatus(client.get("/api/v1/pods?labelSelector=a%3D%3D%3Db", KubeNodeClient.JSON), 400, "BadRequest");
        HttpResponse<byte[]> field = client.get("/api/v1/pods?fieldSelector=spec.hostname%3Dx", KubeNodeClient.JSON);
        assertStatus(field, 400, "BadRequest");
        assertThat(json(field).get("message").getAsString()).contains("is not a known field selector");
        assertStatus(client.get("/api/v1/namespaces/a/pods/nope", KubeNodeClient.JSON), 404, "NotFound");
        assertThat(json(client.get("/api/v1/namespaces/a/pods/nope", KubeNodeClient.JSON))
                        .get("message")
                        .getAsString())
                .isEqualTo("pods \"nope\" not found");
        assertStatus(client.get("/api/v1/nosuchthings", KubeNodeClient.JSON), 404, "NotFound");
        assertStatus(client.get("/apis/nosuch.io/v1", KubeNodeClient.JSON), 404, "NotFound");
        assertStatus(client.get("/openapi/v2", KubeNodeClient.JSON), 404, "NotFound");
        assertStatus(client.get("/api/v1/pods?watch=1&resourceVersion=x", KubeNodeClient.JSON), 400, "BadRequest");
        assertThat(json(client.get("/api/v1/pods?resourceVersion=abc", KubeNodeClient.JSON))
                        .get("message")
                        .getAsString())
                .isEqualTo(
                        "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax");
        // Values kube-apiserver's parameter conversion refuses, in its words.
        HttpResponse<byte[]> badLimit = client.get("/api/v1/pods?limit=abc", KubeNodeClient.JSON);
        assertStatus(badLimit, 400, "BadRequest");
        assertThat(json(badLimit).get("message").getAsString())
                .isEqualTo("strconv.ParseInt: parsing \"abc\": invalid syntax");
        assertStatus(client.get("/api/v1/pods?watch=1&timeoutSeconds=abc", KubeNodeClient.JSON), 400, "BadRequest");
        assertStatus(client.get("/api/v1/pods?watch=1&limit=x", KubeNodeClient.JSON), 400, "BadRequest");
        // A limit below 1 is no limit.
        assertThat(names(json(client.get("/api/v1/namespaces/a/pods?limit=-1", KubeNodeClient.JSON))))
                .hasSize(8);
        // A watch whose timeout has passed ends at once, without events.
        HttpResponse<byte[]> ended = client.get("/api/v1/pods?watch=1&timeoutSeconds=-1", KubeNodeClient.JSON);
        assertThat(ended.statusCode()).isEqualTo(200);
        assertThat(ended.body()).isEmpty();
        // ListOptions validation: 422 Invalid.
        HttpResponse<byte[]> initialList = client.get("/api/v1/pods?sendInitialEvents=true", KubeNodeClient.JSON);
        assertStatus(initialList, 422, "Invalid");
        assertThat(json(initialList).get("message").getAsString())
                .isEqualTo("ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
                        + "sendInitialEvents is forbidden for list");
        assertStatus(
                client.get("/api/v1/pods?watch=1&resourceVersionMatch=NotOlderThan", KubeNodeClient.JSON),
                422,
                "Invalid");
        assertStatus(
                client.get(
                        "/api/v1/pods?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact",
                        KubeNodeClient.JSON),
                422,
                "Invalid");
        // Targets Undertow's parser refuses and path parameters: Statuses too.
        for (String target :
                List.of("/api/v1/pods?labelSelector=%%%", "/api/v1/pods?labelSelector=a%zz", "/api/v1/pods;x=1")) {
            KubeNodeClient.RawResponse r = client.raw(target);
            assertThat(r.code()).as(target + ": " + r.body()).isEqualTo(400);
            JsonObject s = JsonParser.parseString(r.body()).getAsJsonObject();
            assertThat(s.get("kind").getAsString()).isEqualTo("Status");
            assertThat(s.get("apiVersion").getAsString()).isEqualTo("v1");
            assertThat(s.get("status").getAsString()).isEqualTo("Failure");
            assertThat(s.get("reason").getAsString()).isEqualTo("BadRequest");
            assertThat(s.get("code").getAsInt()).isEqualTo(400);
        }
        assertStatus(client.get("/api/v1/pods", "application/yaml"), 406, "NotAcceptable");
        for (String method : List.of("POST", "PUT", "PATCH", "DELETE")) {
            HttpResponse<byte[]> write = client.send(method, "/api/v1/namespaces/a/pods/p0");
            assertStatus(write, 405, "MethodNotAllowed");
            assertThat(json(write).get("message").getAsString()).contains("read-only");
        }

        // An object the node cannot decode: the list answers 500 naming its key, and a metric counts it.
        put("secrets/a/sealed", "k8s:enc:aescbc:v1:key1:\u0001\u0002\u0003".getBytes(StandardCharsets.ISO_8859_1));
        last = put("secrets/a/cbor", new byte[] {(byte) 0xd9, (byte) 0xd9, (byte) 0xf7, (byte) 0xa0});
        awaitNode(node, last);
        HttpResponse<byte[]> broken = client.get("/api/v1/namespaces/a/secrets", KubeNodeClient.JSON);
        assertStatus(broken, 500, "InternalError");
        assertThat(json(broken).get("message").getAsString()).contains(registry + "/secrets/a/cbor");
        assertThat(Stack.metrics(node).get("watchfanout_kube_undecodable_objects_total"))
                .isPositive();
    }

    private static void assertStatus(HttpResponse<byte[]> r, int code, String reason) {
        assertThat(r.statusCode()).as(text(r)).isEqualTo(code);
        JsonObject status = json(r);
        assertThat(status.get("kind").getAsString()).isEqualTo("Status");
        assertThat(status.get("status").getAsString()).isEqualTo("Failure");
        assertThat(status.get("reason").getAsString()).as(text(r)).isEqualTo(reason);
        assertThat(status.get("code").getAsInt()).isEqualTo(code);
    }

    static List<String> names(JsonObject list) {
        List<String> names = new ArrayList<>();
        JsonArray items = list.getAsJsonArray("items");
        for (JsonElement i : items) {
            names.add(
                    i.getAsJsonObject().getAsJsonObject("metadata").get("name").getAsString());
        }
        return names;
    }
}

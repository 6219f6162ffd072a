package io.watchfanout.localstack.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.CodedInputStream;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.LeaseOption;
import io.kubernetes.client.proto.Meta;
import io.kubernetes.client.proto.Runtime;
import io.kubernetes.client.proto.V1Apps;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The demo load driven tick by tick against a real etcd (its own: the load writes fixed keys
 * under {@code /registry/}) for many rollouts per deployment: every kind it writes stays
 * bounded, an earlier run's leftovers go, its events expire with their leases, and what it
 * creates is created now.
 */
class DemoLoadBoundsTest {
    private static final int LIMIT = DemoObjects.REVISION_HISTORY_LIMIT;
    /** Rollouts to drive: well past the history limit for every one of the five deployments. */
    private static final int ROLLOUTS = 5 * (3 * LIMIT);

    private static final int CHECK_EVERY_TICKS = 250;
    private static final Pattern CREATED = Pattern.compile("\"creationTimestamp\":\"([^\"]+)\"");

    @Test
    void everyKindStaysBoundedAndIsCreatedNow() throws Exception {
        try (EtcdServer etcd = EtcdServer.builder().build().start();
                Client client = Client.builder().endpoints(etcd.clientUrl()).build()) {
            Instant old = Instant.parse("2025-01-01T00:00:00Z");
            // An earlier run's: replica sets far past the limit, pods and config maps.
            for (int i = 0; i < 40; i++) {
                String hash = DemoObjects.hex("earlier" + i, 10);
                put(
                        client,
                        "/registry/replicasets/team-a/web-" + hash,
                        DemoObjects.replicaSet("team-a", "web", hash, i, 0, old));
            }
            for (int i = 0; i < 3; i++) {
                put(client, "/registry/pods/team-b/worker-" + DemoObjects.hex("p" + i, 10) + "-abcd" + i, new byte[1]);
            }
            for (int i = 0; i < 20; i++) {
                put(client, "/registry/configmaps/default/settings-xyzw" + (char) ('a' + i), new byte[1]);
            }
            // Not the demo's: stays.
            put(client, "/registry/pods/default/web-1", new byte[1]);
            put(client, "/registry/configmaps/default/settings", new byte[1]);
            Instant testStart = Instant.now().truncatedTo(ChronoUnit.SECONDS);

            DemoLoad load =
                    DemoLoad.driven(Client.builder().endpoints(etcd.clientUrl()).build(), new Random(7));
            long ticks = 0;
            while (load.rollouts() < ROLLOUTS) {
                load.tick();
                if (++ticks % CHECK_EVERY_TICKS == 0) {
                    assertBounded(client);
                }
                assertThat(ticks).as("ticks for %d rollouts", ROLLOUTS).isLessThan(50L * ROLLOUTS);
            }
            load.close();
            assertThat(load.failures()).isZero();
            assertThat(load.swept()).as("the earlier run's objects").isEqualTo(40 + 3 + 20);
            assertBounded(client);

            Map<String, V1Apps.Deployment> deployments = get(client, "/registry/deployments/").stream()
                    .collect(Collectors.toMap(DemoLoadBoundsTest::key, kv -> parse(kv, V1Apps.Deployment.parser())));
            int rolledMost = deployments.values().stream()
                    .mapToInt(d -> (int) d.getMetadata().getGeneration())
                    .max()
                    .orElseThrow();
            assertThat(rolledMost).as("the most rollouts of one deployment").isGreaterThan(2 * LIMIT);
            for (V1Apps.Deployment d : deployments.values()) {
                String name = d.getMetadata().getName();
                List<KeyValue> replicaSets =
                        get(client, "/registry/replicasets/" + d.getMetadata().getNamespace() + "/" + name + "-");
                assertThat(replicaSets)
                        .as(
                                "replica sets of %s at generation %d",
                                name, d.getMetadata().getGeneration())
                        .hasSize((int) Math.min(d.getMetadata().getGeneration(), LIMIT + 1));
                assertThat(replicaSets)
                        .extracting(kv -> parse(kv, V1Apps.ReplicaSet.parser()))
                        .as("one replica set with replicas, the old ones scaled to 0")
                        .filteredOn(rs -> rs.getSpec().getReplicas() > 0)
                        .singleElement()
                        .satisfies(rs -> assertThat(rs.getMetadata().getAnnotationsMap())
                                .containsEntry(
                                        "deployment.kubernetes.io/revision",
                                        d.getMetadata().getAnnotationsMap().get("deployment.kubernetes.io/revision")));
                Meta.ObjectMeta meta = d.getMetadata();
                assertThat(d.getStatus().getConditionsList()).allSatisfy(c -> {
                    assertThat(c.getLastTransitionTime()).isEqualTo(meta.getCreationTimestamp());
                    assertThat(c.getLastUpdateTime().getSeconds())
                            .isGreaterThanOrEqualTo(meta.getCreationTimestamp().getSeconds());
                });
            }

            Instant testEnd = Instant.now();
            for (KeyValue kv : get(client, "/registry/")) {
                String key = key(kv);
                if (key.equals("/registry/pods/default/web-1") || key.equals("/registry/configmaps/default/settings")) {
                    continue;
                }
                assertThat(created(kv)).as("creationTimestamp of %s", key).isBetween(testStart, testEnd);
            }

            // Events live under leases nobody keeps alive: they go, and the leases with them.
            List<KeyValue> events = get(client, "/registry/events/");
            assertThat(events)
                    .isNotEmpty()
                    .allSatisfy(kv -> assertThat(kv.getLease()).isPositive());
            List<Long> leases =
                    events.stream().map(KeyValue::getLease).distinct().toList();
            Awaitility.await("the events' leases expire, and the events with them")
                    .atMost(Duration.ofSeconds(10 * DemoLoad.EVENT_TTL_SECONDS))
                    .pollInterval(Duration.ofSeconds(1))
                    .untilAsserted(() -> {
                        assertThat(get(client, "/registry/events/")).isEmpty();
                        for (long lease : leases) {
                            assertThat(client.getLeaseClient()
                                            .timeToLive(lease, LeaseOption.DEFAULT)
                                            .get(10, TimeUnit.SECONDS)
                                            .getTTL())
                                    .as("TTL of lease %x (-1: gone)", lease)
                                    .isEqualTo(-1);
                        }
                    });
        }
    }

    /** The per-kind bounds, at any time. */
    private static void assertBounded(Client client) throws Exception {
        // Plus the one pod and config map that are not the demo's.
        assertThat(get(client, "/registry/pods/"))
                .as("pods: replicas and surge")
                .hasSizeLessThanOrEqualTo(14 + 5 + 1);
        assertThat(get(client, "/registry/configmaps/")).hasSizeLessThanOrEqualTo(DemoLoad.MAX_CONFIG_MAPS + 1);
        assertThat(get(client, "/registry/replicasets/")).hasSizeLessThanOrEqualTo(5 * (LIMIT + 1));
        assertThat(get(client, "/registry/deployments/")).hasSize(5);
        assertThat(get(client, "/registry/minions/")).hasSize(5);
        assertThat(get(client, "/registry/namespaces/")).hasSize(6);
        assertThat(get(client, "/registry/leases/")).hasSize(5);
        assertThat(get(client, "/registry/demo.example.com/backups/")).hasSize(4);
        assertThat(get(client, "/registry/apiextensions.k8s.io/")).hasSize(1);
    }

    /** {@code metadata.creationTimestamp} of a stored object, protobuf or JSON. */
    private static Instant created(KeyValue kv) throws Exception {
        byte[] value = kv.getValue().getBytes();
        if (value.length > 4 && Arrays.equals(Arrays.copyOf(value, 4), StorageEnvelope.magic())) {
            Runtime.Unknown unknown = Runtime.Unknown.parseFrom(Arrays.copyOfRange(value, 4, value.length));
            // Every built-in object's message has its ObjectMeta as field 1.
            CodedInputStream in = unknown.getRaw().newCodedInput();
            for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
                if (tag >>> 3 == 1) {
                    return Instant.ofEpochSecond(Meta.ObjectMeta.parseFrom(in.readBytes())
                            .getCreationTimestamp()
                            .getSeconds());
                }
                in.skipField(tag);
            }
            throw new AssertionError("no metadata in " + key(kv));
        }
        Matcher m = CREATED.matcher(kv.getValue().toString(StandardCharsets.UTF_8));
        assertThat(m.find()).as("creationTimestamp in %s", key(kv)).isTrue();
        return Instant.parse(m.group(1));
    }

    private static <T> T parse(KeyValue kv, com.google.protobuf.Parser<T> parser) {
        byte[] value = kv.getValue().getBytes();
        try {
            return parser.parseFrom(Runtime.Unknown.parseFrom(Arrays.copyOfRange(value, 4, value.length))
                    .getRaw());
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError(key(kv), e);
        }
    }

    private static String key(KeyValue kv) {
        return kv.getKey().toString(StandardCharsets.UTF_8);
    }

    private static void put(Client client, String key, byte[] value) throws Exception {
        client.getKVClient()
                .put(ByteSequence.from(key, StandardCharsets.UTF_8), ByteSequence.from(value))
                .get(10, TimeUnit.SECONDS);
    }

    private static List<KeyValue> get(Client client, String prefix) throws Exception {
        return DemoLoadTest.keys(client, prefix);
    }
}

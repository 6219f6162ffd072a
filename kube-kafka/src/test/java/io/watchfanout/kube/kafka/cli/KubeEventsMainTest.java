package io.watchfanout.kube.kafka.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.watchfanout.kube.codec.StoredObjects;
import io.watchfanout.kube.kafka.RawEvents;
import io.watchfanout.schema.WatchFanoutSerdes;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.StateCheckpoint;
import io.watchfanout.schema.v1.StateRecord;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import io.watchfanout.testkit.TopicPrefixes;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.Serdes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/** kube-events against a real broker: raw events (and a state topic) in, the command's output and exit status out. */
@ExtendWith(KafkaExtension.class)
class KubeEventsMainTest {
    /**
     * Record timestamps: revision r was received at BASE + r seconds. An hour ago, within the topics'
     * retention (the broker deletes older records) and before any --since of the tests.
     */
    private static final Instant BASE = Instant.now().minus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS);

    @Test
    void atEveryRevisionListsTheObjectsAsTheyWereThen(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        Topics topics = new Topics(kafka, prefix);
        // Puts, updates and deletes of pods in two namespaces, one event per revision from 2 on (and one
        // progress record), with a model of the state after each revision.
        Random random = new Random(49);
        Map<String, KeyValue> live = new TreeMap<>();
        Map<Long, Map<String, KeyValue>> model = new HashMap<>();
        long revision = 1;
        Map<String, KeyValue> atCheckpoint = null;
        StateCheckpoint checkpoint = null;
        for (int i = 0; i < 16; i++) {
            revision++;
            String ns = random.nextBoolean() ? "team-a" : "team-b";
            String name = "web-" + random.nextInt(4);
            String key = "/registry/pods/" + ns + "/" + name;
            KeyValue prev = live.get(key);
            if (prev != null && random.nextInt(3) == 0) {
                topics.event(RawEvents.delete(prev, revision, revision - 1), revision);
                live.remove(key);
            } else {
                long create = prev == null ? revision : prev.getCreateRevision();
                long version = prev == null ? 1 : prev.getVersion() + 1;
                KeyValue kv = RawEvents.kv(key, RawEvents.pod(ns, name, "node-" + revision), create, revision, version);
                topics.event(RawEvents.put(kv, prev, revision - 1), revision);
                live.put(key, kv);
            }
            model.put(revision, new TreeMap<>(live));
            if (i == 5) {
                // A progress record takes an offset and a revision of its own, without an event.
                revision++;
                topics.event(
                        EventsRecord.newBuilder()
                                .setProgress(Progress.newBuilder()
                                        .setRevision(revision)
                                        .setPrevRevision(revision - 1))
                                .build(),
                        revision);
                model.put(revision, new TreeMap<>(live));
            }
            if (checkpoint == null && revision >= 10) {
                atCheckpoint = new TreeMap<>(live);
                checkpoint = StateCheckpoint.newBuilder()
                        .setRevision(revision)
                        .setEventsOffset(topics.eventsWritten)
                        .build();
            }
        }
        // The state topic as the materializer leaves it at its checkpoint: the command undoes the events
        // after it for the revisions before, and applies them for the ones after.
        topics.state(atCheckpoint, checkpoint);
        long last = revision;

        for (long r = 2; r <= last; r++) {
            Run run = run(kafka, prefix, "pods", "-A", "--at", Long.toString(r), "-o", "json");
            assertThat(run.status).as("--at %d: %s", r, run.err).isZero();
            JsonObject list = JsonParser.parseString(run.out).getAsJsonObject();
            assertThat(list.get("kind").getAsString()).isEqualTo("List");
            assertThat(list.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                    .isEqualTo(Long.toString(r));
            assertThat(items(list)).as("--at %d", r).isEqualTo(describe(model.get(r)));
        }

        Run teamA = run(kafka, prefix, "po", "-n", "team-a", "--at", Long.toString(last));
        assertThat(teamA.status).isZero();
        List<String> expectedNames = model.get(last).keySet().stream()
                .filter(k -> k.startsWith("/registry/pods/team-a/"))
                .map(k -> k.substring("/registry/pods/team-a/".length()))
                .toList();
        List<String> lines = teamA.out.lines().toList();
        assertThat(lines.get(0).split(" +")).containsExactly("NAME", "RESOURCEVERSION", "AGE");
        assertThat(lines.subList(1, lines.size()))
                .extracting(l -> l.split(" +")[0])
                .containsExactlyElementsOf(expectedNames);

        Run atTime = run(
                kafka,
                prefix,
                "pods",
                "-A",
                "-o",
                "json",
                "--at",
                BASE.plusMillis(7_500).toString());
        assertThat(atTime.status).as(atTime.err).isZero();
        JsonObject atSeven = JsonParser.parseString(atTime.out).getAsJsonObject();
        assertThat(atSeven.getAsJsonObject("metadata").get("resourceVersion").getAsString())
                .isEqualTo("7");
        assertThat(items(atSeven)).isEqualTo(describe(model.get(7L)));

        Run tooOld = run(kafka, prefix, "pods", "-A", "--at", "1");
        assertThat(tooOld.status).isEqualTo(1);
        assertThat(tooOld.err.strip())
                .isEqualTo("kube-events: revision 1 is older than the oldest revision " + prefix
                        + ".events holds, 2 (retention removed the events before it)");
        Run ahead = run(kafka, prefix, "pods", "-A", "--at", Long.toString(last + 1));
        assertThat(ahead.status).isEqualTo(1);
        assertThat(ahead.err.lines()).hasSize(1);
        assertThat(ahead.err).contains("is ahead of the newest revision " + prefix + ".events holds, " + last);
    }

    @Test
    void tailsFromARevisionOrATimeFilteredByNamespaceAndLabels(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        Topics topics = new Topics(kafka, prefix);
        KeyValue a1 = RawEvents.kv("/registry/pods/team-a/web", RawEvents.pod("team-a", "web", ""), 2, 2, 1);
        KeyValue b1 = RawEvents.kv("/registry/pods/team-b/db", RawEvents.pod("team-b", "db", ""), 3, 3, 1);
        KeyValue a2 = RawEvents.kv("/registry/pods/team-a/web", RawEvents.pod("team-a", "web", "n1"), 2, 4, 2);
        KeyValue cm = RawEvents.kv(
                "/registry/configmaps/team-a/settings",
                StoredObjects.configMap("team-a", "settings", "k", "v"),
                5,
                5,
                1);
        topics.event(RawEvents.put(a1, null, 1), 2);
        topics.event(RawEvents.put(b1, null, 2), 3);
        topics.event(RawEvents.put(a2, a1, 3), 4);
        topics.event(RawEvents.put(cm, null, 4), 5);
        topics.event(RawEvents.delete(a2, 6, 5), 6);

        Run all = run(kafka, prefix, "pods", "-A", "-o", "json");
        assertThat(all.status).as(all.err).isZero();
        List<JsonObject> events = all.out
                .lines()
                .map(l -> JsonParser.parseString(l).getAsJsonObject())
                .toList();
        assertThat(events)
                .extracting(e -> e.get("type").getAsString())
                .containsExactly("ADDED", "ADDED", "MODIFIED", "DELETED");
        assertThat(events)
                .extracting(e -> e.getAsJsonObject("object")
                        .getAsJsonObject("metadata")
                        .get("resourceVersion")
                        .getAsString())
                .containsExactly("2", "3", "4", "6");

        assertThat(run(kafka, prefix, "pods", "-A", "--from-revision", "4", "-o", "name")
                        .out
                        .lines())
                .containsExactly("pod/web", "pod/web");
        assertThat(run(kafka, prefix, "pod", "-n", "team-b", "-o", "name").out.lines())
                .containsExactly("pod/db");
        assertThat(run(kafka, prefix, "pods", "-A", "-l", "app=web", "-o", "name")
                        .out
                        .lines())
                .containsExactly("pod/web", "pod/web", "pod/web");
        List<String> table =
                run(kafka, prefix, "cm", "-n", "team-a").out.lines().toList();
        assertThat(table.get(0).split(" +")).containsExactly("NAME", "EVENT", "RESOURCEVERSION", "AGE");
        assertThat(table.get(1)).startsWith("settings   ADDED   5 ");

        // Every record so far was received an hour ago: none in the last ten minutes.
        Run since = run(kafka, prefix, "pods", "-A", "--since", "10m", "-o", "name");
        assertThat(since.status).isZero();
        assertThat(since.out).isEmpty();
        KeyValue fresh = RawEvents.kv("/registry/pods/team-b/new", RawEvents.pod("team-b", "new", ""), 7, 7, 1);
        topics.eventAt(RawEvents.put(fresh, null, 6), Instant.now());
        assertThat(run(kafka, prefix, "pods", "-A", "--since", "10m", "-o", "name")
                        .out
                        .lines())
                .containsExactly("pod/new");
    }

    @Test
    void followPrintsEventsWrittenAfterItStarted(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        Topics topics = new Topics(kafka, prefix);
        KeyValue a = RawEvents.kv("/registry/pods/default/a", RawEvents.pod("default", "a", ""), 2, 2, 1);
        topics.event(RawEvents.put(a, null, 1), 2);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        AtomicInteger status = new AtomicInteger(-1);
        Thread follow = new Thread(
                () -> status.set(KubeEventsMain.commandLine(Map.of())
                        .setOut(new PrintWriter(out, true))
                        .setErr(new PrintWriter(err, true))
                        .execute(
                                "pods",
                                "--follow",
                                "-o",
                                "name",
                                "--kafka-bootstrap",
                                kafka.bootstrapServers(),
                                "--topic-prefix",
                                prefix)),
                "kube-events-follow");
        follow.start();
        await().atMost(Duration.ofMinutes(1)).until(() -> out.toString().contains("pod/a"));
        KeyValue b = RawEvents.kv("/registry/pods/default/b", RawEvents.pod("default", "b", ""), 3, 3, 1);
        topics.event(RawEvents.put(b, null, 2), 3);
        await().atMost(Duration.ofMinutes(1)).until(() -> out.toString().contains("pod/b"));
        follow.interrupt();
        follow.join(Duration.ofMinutes(1).toMillis());
        assertThat(follow.isAlive()).isFalse();
        assertThat(status.get()).as(err.toString()).isZero();
        assertThat(out.toString().lines()).containsExactly("pod/a", "pod/b");
    }

    @Test
    void badFlagsAreUsageErrorsAndAnUnknownResourceIsOneLine(KafkaBroker kafka, TestInfo info) throws Exception {
        String prefix = TopicPrefixes.unique(info);
        new Topics(kafka, prefix);
        for (String[] args : List.of(
                new String[] {"pods", "--no-such-flag"},
                new String[] {"pods", "-o", "xml"},
                new String[] {"pods", "--at", "yesterday"},
                new String[] {"pods", "--at", "5", "--follow"},
                new String[] {"pods", "--since", "1m", "--from-revision", "3"},
                new String[] {"pods", "-l", "a in (b"},
                new String[] {})) {
            Run bad = run(kafka, prefix, args);
            assertThat(bad.status).as(String.join(" ", args)).isEqualTo(2);
            assertThat(bad.err)
                    .as(String.join(" ", args))
                    .contains("Usage: kube-events")
                    .doesNotContain("\tat ");
        }
        Run unknown = run(kafka, prefix, "gizmos");
        assertThat(unknown.status).isEqualTo(1);
        assertThat(unknown.err.lines()).hasSize(1);
        assertThat(unknown.err).startsWith("kube-events: unknown resource type \"gizmos\"");
    }

    /** Each item of a List as {@code namespace/name resourceVersion nodeName}. */
    private static Set<String> items(JsonObject list) {
        Set<String> items = new TreeSet<>();
        for (JsonElement item : list.getAsJsonArray("items")) {
            JsonObject meta = item.getAsJsonObject().getAsJsonObject("metadata");
            JsonElement node = item.getAsJsonObject().getAsJsonObject("spec").get("nodeName");
            items.add(meta.get("namespace").getAsString() + "/"
                    + meta.get("name").getAsString() + " "
                    + meta.get("resourceVersion").getAsString() + " " + (node == null ? "" : node.getAsString()));
        }
        return items;
    }

    /** The model's key-values as {@link #items} describes a List's (each put is on node-<its revision>). */
    private static Set<String> describe(Map<String, KeyValue> state) {
        Set<String> items = new TreeSet<>();
        state.values().forEach(kv -> {
            String[] parts = kv.getKey().toStringUtf8().split("/");
            items.add(parts[3] + "/" + parts[4] + " " + kv.getModRevision() + " node-" + kv.getModRevision());
        });
        return items;
    }

    private static Run run(KafkaBroker kafka, String prefix, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(Arrays.asList(args));
        if (args.length > 0) {
            all.addAll(List.of("--kafka-bootstrap", kafka.bootstrapServers(), "--topic-prefix", prefix));
        }
        int status = KubeEventsMain.commandLine(Map.of())
                .setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true))
                .execute(all.toArray(String[]::new));
        return new Run(status, out.toString(), err.toString());
    }

    private record Run(int status, String out, String err) {}

    /** The events and state topics of one prefix, and their writers. */
    private static final class Topics {
        private final KafkaBroker kafka;
        private final String prefix;
        private long eventsWritten;

        Topics(KafkaBroker kafka, String prefix) throws Exception {
            this.kafka = kafka;
            this.prefix = prefix;
            try (Admin admin =
                    Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
                admin.createTopics(List.of(
                                new NewTopic(WatchFanoutSerdes.eventsTopic(prefix), 1, (short) 1),
                                new NewTopic(WatchFanoutSerdes.stateTopic(prefix), 1, (short) 1)))
                        .all()
                        .get();
            }
        }

        /** Writes a record of {@code revision}, received at BASE + revision seconds. */
        void event(EventsRecord record, long revision) throws Exception {
            eventAt(record, BASE.plusSeconds(revision));
        }

        void eventAt(EventsRecord record, Instant time) throws Exception {
            try (KafkaProducer<byte[], EventsRecord> producer = new KafkaProducer<>(
                    Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                    Serdes.ByteArray().serializer(),
                    WatchFanoutSerdes.eventsRecord().serializer())) {
                byte[] key =
                        record.hasEvent() ? record.getEvent().getKv().getKey().toByteArray() : new byte[0];
                producer.send(new ProducerRecord<>(
                                WatchFanoutSerdes.eventsTopic(prefix), 0, time.toEpochMilli(), key, record))
                        .get();
            }
            eventsWritten++;
        }

        /** Writes {@code state}, a tombstone and the checkpoint, as the state materializer would. */
        void state(Map<String, KeyValue> state, StateCheckpoint checkpoint) throws Exception {
            try (KafkaProducer<byte[], StateRecord> producer = new KafkaProducer<>(
                    Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
                    Serdes.ByteArray().serializer(),
                    WatchFanoutSerdes.stateRecord().serializer())) {
                String topic = WatchFanoutSerdes.stateTopic(prefix);
                for (KeyValue kv : state.values()) {
                    producer.send(new ProducerRecord<>(
                            topic,
                            kv.getKey().toByteArray(),
                            StateRecord.newBuilder().setKv(kv).build()));
                }
                // A key deleted before the checkpoint, whose tombstone compaction has not removed yet.
                producer.send(new ProducerRecord<>(
                        topic, "/registry/pods/team-c/gone".getBytes(StandardCharsets.UTF_8), null));
                producer.send(new ProducerRecord<>(
                        topic,
                        new byte[0],
                        StateRecord.newBuilder().setCheckpoint(checkpoint).build()));
                producer.flush();
            }
        }
    }
}

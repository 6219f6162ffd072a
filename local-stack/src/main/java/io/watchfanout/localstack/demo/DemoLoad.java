package io.watchfanout.localstack.demo;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load generator of {@code bin/local-stack --demo}: a small Kubernetes-like control plane
 * writing to etcd what kube-apiserver would, so that a watch, or kubectl against a fan-out node,
 * shows live traffic at once. It first writes namespaces, nodes, the deployments with their
 * replica sets, and a CustomResourceDefinition ({@code backups.demo.example.com}) with a few
 * backups; then, at a fixed rate, it
 * <ul>
 *   <li>creates pods of five deployments (a transaction: the pod and its {@code Scheduled}
 *       event), starts them, flips their readiness, restarts and deletes them (a transaction:
 *       the delete and a {@code Killing} event);</li>
 *   <li>rolls a deployment out now and then (a transaction of three keys: the deployment,
 *       the new replica set and the scaled-down old one), after which its pods are replaced;</li>
 *   <li>renews node leases ({@code /registry/leases/kube-node-lease/node-N});</li>
 *   <li>creates, updates and deletes config maps of 1–6 KB;</li>
 *   <li>records events under an etcd lease of {@value #EVENT_TTL_SECONDS} s, one lease per
 *       {@value #EVENT_LEASE_WINDOW_SECONDS} s: when it expires, etcd deletes all of that
 *       window's events in one revision;</li>
 *   <li>moves a backup through its phases now and then, and updates a node's heartbeat.</li>
 * </ul>
 * Keys follow kube-apiserver's layout: {@code /registry/pods/<namespace>/<name>},
 * {@code /registry/configmaps/...}, {@code /registry/deployments/...},
 * {@code /registry/replicasets/...}, {@code /registry/events/...},
 * {@code /registry/leases/...}, {@code /registry/minions/<node>},
 * {@code /registry/namespaces/<name>}, and with the group for the CRD and its resources:
 * {@code /registry/apiextensions.k8s.io/customresourcedefinitions/backups.demo.example.com},
 * {@code /registry/demo.example.com/backups/<namespace>/<name>}. Values are encoded as
 * kube-apiserver stores them: protobuf envelopes for built-in objects ({@link KubeObjects}),
 * JSON for the CRD and the backups ({@link CustomObjects}). The object count stays bounded
 * (about 20 pods, 12 config maps). Failed writes (etcd away) are counted and logged, never
 * fatal.
 *
 * <p>Threads: every write and all state belong to one scheduler thread; {@link #close()} may
 * be called from any thread.
 */
public final class DemoLoad implements AutoCloseable {
    /** Time to live of the etcd lease that events are written under, in seconds. */
    static final long EVENT_TTL_SECONDS = 20;
    /** Events written within this many seconds share one lease (and expire together). */
    static final long EVENT_LEASE_WINDOW_SECONDS = 5;

    private static final Logger LOG = LoggerFactory.getLogger(DemoLoad.class);
    private static final long TIMEOUT_SECONDS = 5;
    private static final int NODES = 5;
    private static final int MAX_CONFIG_MAPS = 12;
    private static final List<String> NAMESPACES =
            List.of("default", "kube-system", "kube-public", "kube-node-lease", "team-a", "team-b");
    private static final Duration STATS_EVERY = Duration.ofSeconds(30);

    private final Client client;
    private final KV kv;
    private final ScheduledExecutorService scheduler;
    private final Random random = new Random();

    // Owned by the scheduler thread.
    private final List<App> apps = List.of(
            new App("team-a", "web", 4),
            new App("team-a", "api", 3),
            new App("team-b", "worker", 3),
            new App("default", "nginx", 2),
            new App("kube-system", "coredns", 2));
    private final Map<String, KubeObjects.Pod> pods = new LinkedHashMap<>();
    private final Map<String, Integer> configMaps = new LinkedHashMap<>();
    private final List<Backup> backups = List.of(
            new Backup("team-a", "orders-db", "postgres://orders", "0 * * * *"),
            new Backup("team-a", "users-db", "postgres://users", "30 2 * * *"),
            new Backup("team-b", "queue-db", "redis://queue", "*/15 * * * *"),
            new Backup("default", "metrics-db", "postgres://metrics", "0 */6 * * *"));
    private boolean seeded;
    private long eventLease;
    private long eventLeaseSince;
    private int nextIp;
    // Written by the scheduler thread only; volatile for the readers of the counts.
    private volatile long writes;
    private volatile long transactions;
    private volatile long failures;
    private long lastFailureLogNanos;
    private long lastStatsNanos = System.nanoTime();

    private DemoLoad(Client client, ScheduledExecutorService scheduler) {
        this.client = client;
        this.kv = client.getKVClient();
        this.scheduler = scheduler;
    }

    /**
     * Connects to etcd and starts writing.
     *
     * @param etcdUrl the etcd client URL, e.g. {@code http://127.0.0.1:2379}, or several, comma-separated
     * @param writesPerSecond the rate, at least 1
     * @return the running load; {@link #close()} stops it
     * @throws IllegalArgumentException if the rate is below 1
     */
    public static DemoLoad start(String etcdUrl, int writesPerSecond) {
        return start(Client.builder().endpoints(etcdUrl.split(",")).build(), etcdUrl, writesPerSecond);
    }

    /**
     * As {@link #start(String, int)}, through {@code client} (e.g. one with TLS and a user), which
     * the load closes when it stops.
     *
     * @param where the etcd the client talks to, for the log line
     */
    public static DemoLoad start(Client client, String where, int writesPerSecond) {
        if (writesPerSecond < 1) {
            throw new IllegalArgumentException("writesPerSecond: " + writesPerSecond + " (expected: >= 1)");
        }
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "demo-load");
            t.setDaemon(true);
            return t;
        });
        DemoLoad load = new DemoLoad(client, scheduler);
        long periodMicros = Math.max(1, 1_000_000L / writesPerSecond);
        scheduler.scheduleAtFixedRate(load::tick, 0, periodMicros, TimeUnit.MICROSECONDS);
        LOG.info("demo load: {} writes/s to {} under /registry/", writesPerSecond, where);
        return load;
    }

    /** One write (scheduler thread). */
    private void tick() {
        try {
            double r = random.nextDouble();
            if (!seeded) {
                seed();
            } else if (r < 0.35) {
                podLifecycle();
            } else if (r < 0.48) {
                renewNodeLease();
            } else if (r < 0.60) {
                podStatusChange();
            } else if (r < 0.75) {
                recordEvent(
                        randomPod(), "Pulled", "Successfully pulled image in 1.2s (1.2s including waiting)", "Normal");
            } else if (r < 0.89) {
                configMapChange();
            } else if (r < 0.94) {
                backupProgress();
            } else if (r < 0.96) {
                nodeHeartbeat();
            } else {
                rollout();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            failures++;
            if (System.nanoTime() - lastFailureLogNanos > TimeUnit.SECONDS.toNanos(10)) {
                lastFailureLogNanos = System.nanoTime();
                LOG.warn("demo load: a write failed ({} failures so far): {}", failures, e.toString());
            }
        }
        if (System.nanoTime() - lastStatsNanos > STATS_EVERY.toNanos()) {
            lastStatsNanos = System.nanoTime();
            LOG.info(
                    "demo load: {} writes ({} transactions), {} failures; {} pods, {} config maps",
                    writes,
                    transactions,
                    failures,
                    pods.size(),
                    configMaps.size());
        }
    }

    /**
     * Namespaces, nodes, the backups' CRD and the backups, the deployments with their replica
     * sets (a transaction each) and the node leases.
     */
    private void seed() throws InterruptedException, ExecutionException, TimeoutException {
        for (String namespace : NAMESPACES) {
            put("/registry/namespaces/" + namespace, KubeObjects.namespace(namespace));
        }
        for (int n = 1; n <= NODES; n++) {
            put("/registry/minions/node-" + n, KubeObjects.node("node-" + n, Instant.now()));
        }
        put(CustomObjects.definitionKey("/registry"), CustomObjects.definition());
        for (Backup backup : backups) {
            put(backup.key(), backup.value());
        }
        for (App app : apps) {
            txn(
                    List.of(),
                    List.of(
                            putDeployment(app),
                            putReplicaSet(app, app.templateHash, app.generation, app.replicas, app.templateSince)));
        }
        for (int n = 1; n <= NODES; n++) {
            put("/registry/leases/kube-node-lease/node-" + n, KubeObjects.nodeLease("node-" + n, Instant.now()));
        }
        seeded = true;
    }

    // ---- pods ----------------------------------------------------------------------------

    /** Keeps every deployment at its replica count: create, replace old-template pods, start, churn. */
    private void podLifecycle() throws InterruptedException, ExecutionException, TimeoutException {
        List<App> shuffled = new ArrayList<>(apps);
        Collections.shuffle(shuffled, random);
        for (App app : shuffled) {
            long current = pods.values().stream()
                    .filter(p -> p.app.equals(app.name) && p.templateHash.equals(app.templateHash))
                    .count();
            if (current < app.replicas) {
                createPod(app);
                return;
            }
        }
        for (KubeObjects.Pod pod : pods.values()) {
            App app = appOf(pod);
            if (!pod.templateHash.equals(app.templateHash)) {
                deletePod(pod);
                return;
            }
        }
        for (KubeObjects.Pod pod : pods.values()) {
            if (pod.started == null) {
                pod.started = KubeObjects.now();
                pod.phase = "Running";
                pod.ready = true;
                put(pod.key(), KubeObjects.pod(pod));
                return;
            }
        }
        deletePod(randomPod());
    }

    private void createPod(App app) throws InterruptedException, ExecutionException, TimeoutException {
        String node = "node-" + (1 + random.nextInt(NODES));
        KubeObjects.Pod pod = new KubeObjects.Pod(
                app.namespace,
                app.name,
                app.templateHash,
                app.name + "-" + app.templateHash + "-" + KubeObjects.suffix(random, 5),
                node,
                nextIp++ % 60_000);
        ByteSequence key = bytes(pod.key());
        txn(
                List.of(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.version(0))),
                List.of(
                        Op.put(key, ByteSequence.from(KubeObjects.pod(pod)), PutOption.DEFAULT),
                        eventOp(
                                pod,
                                "Scheduled",
                                "Successfully assigned " + pod.namespace + "/" + pod.name + " to " + node,
                                "Normal")));
        pods.put(pod.key(), pod);
    }

    private void deletePod(KubeObjects.Pod pod) throws InterruptedException, ExecutionException, TimeoutException {
        if (pod == null) {
            return;
        }
        txn(
                List.of(),
                List.of(
                        Op.delete(bytes(pod.key()), DeleteOption.DEFAULT),
                        eventOp(pod, "Killing", "Stopping container " + pod.app, "Normal")));
        pods.remove(pod.key());
    }

    /** A running pod's readiness flips, or its container restarts. */
    private void podStatusChange() throws InterruptedException, ExecutionException, TimeoutException {
        KubeObjects.Pod pod = randomPod();
        if (pod == null || pod.started == null) {
            podLifecycle();
            return;
        }
        if (random.nextInt(4) == 0) {
            pod.restarts++;
            pod.ready = false;
            put(pod.key(), KubeObjects.pod(pod));
            recordEvent(pod, "BackOff", "Back-off restarting failed container " + pod.app, "Warning");
        } else {
            pod.ready = !pod.ready || random.nextBoolean();
            put(pod.key(), KubeObjects.pod(pod));
        }
    }

    private KubeObjects.Pod randomPod() {
        if (pods.isEmpty()) {
            return null;
        }
        int i = random.nextInt(pods.size());
        return pods.values().stream().skip(i).findFirst().orElse(null);
    }

    private App appOf(KubeObjects.Pod pod) {
        return apps.stream().filter(a -> a.name.equals(pod.app)).findFirst().orElseThrow();
    }

    /** A new template for one deployment: deployment, new and old replica set in one transaction. */
    private void rollout() throws InterruptedException, ExecutionException, TimeoutException {
        App app = apps.get(random.nextInt(apps.size()));
        String oldHash = app.templateHash;
        Instant oldSince = app.templateSince;
        app.templateSince = KubeObjects.now();
        app.generation++;
        app.templateHash = KubeObjects.hex(app.name + app.generation + random.nextInt(), 10);
        txn(
                List.of(),
                List.of(
                        putDeployment(app),
                        putReplicaSet(app, app.templateHash, app.generation, app.replicas, app.templateSince),
                        putReplicaSet(app, oldHash, app.generation - 1, 0, oldSince)));
    }

    private static Op putDeployment(App app) {
        return Op.put(
                bytes("/registry/deployments/" + app.namespace + "/" + app.name),
                ByteSequence.from(KubeObjects.deployment(
                        app.namespace, app.name, app.templateHash, app.generation, app.replicas, app.created)),
                PutOption.DEFAULT);
    }

    private static Op putReplicaSet(App app, String templateHash, int generation, int replicas, Instant created) {
        return Op.put(
                bytes("/registry/replicasets/" + app.namespace + "/" + app.name + "-" + templateHash),
                ByteSequence.from(
                        KubeObjects.replicaSet(app.namespace, app.name, templateHash, generation, replicas, created)),
                PutOption.DEFAULT);
    }

    // ---- leases, events, config maps -------------------------------------------------------

    /** A kubelet's periodic status update: the node's conditions get a new heartbeat. */
    private void nodeHeartbeat() throws InterruptedException, ExecutionException, TimeoutException {
        String node = "node-" + (1 + random.nextInt(NODES));
        put("/registry/minions/" + node, KubeObjects.node(node, Instant.now()));
    }

    /** One backup moves on: Scheduled, Running, then Succeeded (or, now and then, Failed). */
    private void backupProgress() throws InterruptedException, ExecutionException, TimeoutException {
        Backup backup = backups.get(random.nextInt(backups.size()));
        switch (backup.phase) {
            case "Running" -> {
                if (random.nextInt(6) == 0) {
                    backup.phase = "Failed";
                } else {
                    backup.phase = "Succeeded";
                    backup.lastSuccess = KubeObjects.now();
                    backup.sizeBytes = 50_000_000L + random.nextInt(900_000_000);
                }
            }
            case "Scheduled" -> backup.phase = "Running";
            default -> backup.phase = "Scheduled";
        }
        put(backup.key(), backup.value());
    }

    private void renewNodeLease() throws InterruptedException, ExecutionException, TimeoutException {
        String node = "node-" + (1 + random.nextInt(NODES));
        put("/registry/leases/kube-node-lease/" + node, KubeObjects.nodeLease(node, Instant.now()));
    }

    private void recordEvent(KubeObjects.Pod pod, String reason, String message, String type)
            throws InterruptedException, ExecutionException, TimeoutException {
        if (pod == null) {
            return;
        }
        txn(List.of(), List.of(eventOp(pod, reason, message, type)));
    }

    /** A put of an event under the current event lease (granted anew every few seconds). */
    private Op eventOp(KubeObjects.Pod pod, String reason, String message, String type)
            throws InterruptedException, ExecutionException, TimeoutException {
        long nowSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime());
        if (eventLease == 0 || nowSeconds - eventLeaseSince >= EVENT_LEASE_WINDOW_SECONDS) {
            eventLease = client.getLeaseClient()
                    .grant(EVENT_TTL_SECONDS)
                    .get(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .getID();
            eventLeaseSince = nowSeconds;
        }
        String name = pod.name + "." + KubeObjects.hex(pod.uid + reason + System.nanoTime(), 16);
        return Op.put(
                bytes("/registry/events/" + pod.namespace + "/" + name),
                ByteSequence.from(KubeObjects.event(pod.namespace, name, pod, reason, message, type)),
                PutOption.builder().withLeaseId(eventLease).build());
    }

    private void configMapChange() throws InterruptedException, ExecutionException, TimeoutException {
        String[] namespaces = {"team-a", "team-b", "default", "kube-system"};
        if (configMaps.size() < MAX_CONFIG_MAPS) {
            String ns = namespaces[random.nextInt(namespaces.length)];
            String key = "/registry/configmaps/" + ns + "/settings-" + KubeObjects.suffix(random, 5);
            configMaps.put(key, 1);
            put(key, KubeObjects.configMap(ns, key.substring(key.lastIndexOf('/') + 1), 1, random));
            return;
        }
        String key = new ArrayList<>(configMaps.keySet()).get(random.nextInt(configMaps.size()));
        if (random.nextInt(5) == 0) {
            delete(key);
            configMaps.remove(key);
            return;
        }
        int revision = configMaps.merge(key, 1, Integer::sum);
        String ns = key.split("/")[3];
        put(key, KubeObjects.configMap(ns, key.substring(key.lastIndexOf('/') + 1), revision, random));
    }

    // ---- etcd ------------------------------------------------------------------------------

    private void put(String key, byte[] value) throws InterruptedException, ExecutionException, TimeoutException {
        await(kv.put(bytes(key), ByteSequence.from(value)));
        writes++;
    }

    private void delete(String key) throws InterruptedException, ExecutionException, TimeoutException {
        await(kv.delete(bytes(key)));
        writes++;
    }

    private void txn(List<Cmp> compares, List<Op> ops)
            throws InterruptedException, ExecutionException, TimeoutException {
        await(kv.txn()
                .If(compares.toArray(Cmp[]::new))
                .Then(ops.toArray(Op[]::new))
                .commit());
        writes++;
        if (ops.size() > 1) {
            transactions++;
        }
    }

    private static <T> T await(CompletableFuture<T> future)
            throws InterruptedException, ExecutionException, TimeoutException {
        return future.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Writes done so far (a transaction counts once). */
    long writes() {
        return writes;
    }

    /** Transactions of more than one operation done so far. */
    long transactions() {
        return transactions;
    }

    /** Writes that failed so far. */
    long failures() {
        return failures;
    }

    /** Stops writing (waits up to 5 s for a write in flight) and closes the etcd client. Idempotent. */
    @Override
    public void close() {
        scheduler.shutdownNow();
        try {
            if (!scheduler.awaitTermination(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                LOG.warn("demo load: a write still runs after {} s; closing the client anyway", TIMEOUT_SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        client.close();
        LOG.info("demo load stopped: {} writes ({} transactions), {} failures", writes, transactions, failures);
    }

    /** A backup custom resource whose phase the demo moves on. Scheduler thread only. */
    private static final class Backup {
        final String namespace;
        final String name;
        final String database;
        final String schedule;
        String phase = "Scheduled";
        Instant lastSuccess;
        long sizeBytes;

        Backup(String namespace, String name, String database, String schedule) {
            this.namespace = namespace;
            this.name = name;
            this.database = database;
            this.schedule = schedule;
        }

        String key() {
            return CustomObjects.backupKey("/registry", namespace, name);
        }

        byte[] value() {
            return CustomObjects.backup(namespace, name, database, schedule, 1, phase, lastSuccess, sizeBytes);
        }
    }

    /** A deployment whose pods the demo keeps at its replica count. Scheduler thread only. */
    private static final class App {
        final String namespace;
        final String name;
        final int replicas;
        final Instant created = KubeObjects.now();
        String templateHash;
        Instant templateSince = created;
        int generation = 1;

        App(String namespace, String name, int replicas) {
            this.namespace = namespace;
            this.name = name;
            this.replicas = replicas;
            this.templateHash = KubeObjects.hex(namespace + name, 10);
        }
    }
}

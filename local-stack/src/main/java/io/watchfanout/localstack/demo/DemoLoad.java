package io.watchfanout.localstack.demo;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load generator of {@code bin/local-stack --demo}: a small Kubernetes-like control plane
 * writing to etcd what kube-apiserver would, so that a watch, or kubectl against a fan-out node,
 * shows live traffic at once. It first writes namespaces, nodes, the deployments with their
 * replica sets, and a CustomResourceDefinition ({@code backups.demo.example.com}) with a few
 * backups, all created now; then, at a fixed rate, it
 * <ul>
 *   <li>creates pods of five deployments (a transaction: the pod and its {@code Scheduled}
 *       event), starts them, flips their readiness, restarts and deletes them (a transaction:
 *       the delete and a {@code Killing} event);</li>
 *   <li>rolls a deployment out now and then (a transaction: the deployment, the new replica
 *       set, the scaled-down old one, and the deletes of the oldest old ones beyond
 *       {@code revisionHistoryLimit}, {@value DemoObjects#REVISION_HISTORY_LIMIT}, as the
 *       deployment controller cleans up), after which its pods are replaced, never more than
 *       the replicas plus the 25 % surge at once;</li>
 *   <li>renews node leases ({@code /registry/leases/kube-node-lease/node-N});</li>
 *   <li>creates, updates and deletes config maps of 1–6 KB (at most {@value #MAX_CONFIG_MAPS});</li>
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
 * kube-apiserver stores them: protobuf envelopes for built-in objects ({@link DemoObjects}),
 * JSON for the CRD and the backups ({@link CustomObjects}).
 *
 * <p>Every kind stays bounded however long it runs: at most 19 pods, 12 config maps, 11
 * replica sets per deployment, the events of the last {@value #EVENT_TTL_SECONDS} s, the rest
 * at fixed keys. A sweep (at start, after a failed write, every {@value #SWEEP_EVERY_TICKS}
 * writes) deletes the demo-shaped pods, replica sets and config maps the load does not know:
 * an earlier run's on the same etcd, or those of a write that failed on the client's side but
 * happened. Failed writes (etcd away) are counted and logged, never fatal. etcd's history is
 * not the load's to bound: the local stack runs its etcd with periodic compaction when the demo
 * is on, as kube-apiserver compacts a cluster's.
 *
 * <p>Threads: every write and all state belong to one scheduler thread (the caller's, for a
 * {@linkplain #driven driven} load); {@link #close()} may be called from any thread.
 */
public final class DemoLoad implements AutoCloseable {
    /** Time to live of the etcd lease that events are written under, in seconds. */
    static final long EVENT_TTL_SECONDS = 20;
    /** Events written within this many seconds share one lease (and expire together). */
    static final long EVENT_LEASE_WINDOW_SECONDS = 5;
    /** Ticks between two sweeps of objects the demo does not know (besides at start and after a failure). */
    static final int SWEEP_EVERY_TICKS = 1000;
    /** The most config maps there are at once. */
    static final int MAX_CONFIG_MAPS = 12;

    private static final Logger LOG = LoggerFactory.getLogger(DemoLoad.class);
    private static final int NODES = 5;
    private static final List<String> NAMESPACES =
            List.of("default", "kube-system", "kube-public", "kube-node-lease", "team-a", "team-b");
    private static final List<String> CONFIG_MAP_NAMESPACES = List.of("team-a", "team-b", "default", "kube-system");
    private static final Pattern HASH = Pattern.compile("[0-9a-f]{10}");
    private static final Pattern POD_SUFFIX = Pattern.compile("[0-9a-f]{10}-[a-z0-9]{5}");
    private static final Pattern CONFIG_MAP_NAME = Pattern.compile("settings-[a-z0-9]{5}");
    private static final Duration STATS_EVERY = Duration.ofSeconds(30);

    private final DemoEtcd etcd;
    private final ScheduledExecutorService scheduler; // null when driven by tick() alone
    private final Random random;
    /** When this run began: the creationTimestamp of what it writes at start. */
    private final Instant started = DemoObjects.now();

    // Owned by the scheduler thread.
    private final List<App> apps = List.of(
            new App("team-a", "web", 4, started),
            new App("team-a", "api", 3, started),
            new App("team-b", "worker", 3, started),
            new App("default", "nginx", 2, started),
            new App("kube-system", "coredns", 2, started));
    private final Map<String, DemoObjects.Pod> pods = new LinkedHashMap<>();
    private final Map<String, ConfigMap> configMaps = new LinkedHashMap<>();
    private final List<Backup> backups = List.of(
            new Backup("team-a", "orders-db", "postgres://orders", "0 * * * *"),
            new Backup("team-a", "users-db", "postgres://users", "30 2 * * *"),
            new Backup("team-b", "queue-db", "redis://queue", "*/15 * * * *"),
            new Backup("default", "metrics-db", "postgres://metrics", "0 */6 * * *"));
    private boolean seeded;
    private boolean sweepDue = true;
    private long ticks;
    private long eventLease;
    private long eventLeaseSince;
    private int nextIp;
    // Written by the scheduler thread only; volatile for the readers of the counts.
    private volatile long failures;
    private volatile long rollouts;
    private volatile long swept;
    private long lastFailureLogNanos;
    private long lastStatsNanos = System.nanoTime();

    private DemoLoad(Client client, ScheduledExecutorService scheduler, Random random) {
        this.etcd = new DemoEtcd(client);
        this.scheduler = scheduler;
        this.random = random;
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
        DemoLoad load = new DemoLoad(client, scheduler, new Random());
        long periodMicros = Math.max(1, 1_000_000L / writesPerSecond);
        scheduler.scheduleAtFixedRate(load::tick, 0, periodMicros, TimeUnit.MICROSECONDS);
        LOG.info("demo load: {} writes/s to {} under /registry/", writesPerSecond, where);
        return load;
    }

    /**
     * A load that writes only when {@link #tick()} is called, on the caller's thread, with
     * {@code random} deciding what: so that a test drives it by count, not by time.
     */
    static DemoLoad driven(Client client, Random random) {
        return new DemoLoad(client, null, random);
    }

    /**
     * One write (the scheduler's thread, or the caller's for {@link #driven}); before it, when
     * due, a {@linkplain #sweep() sweep}.
     */
    void tick() {
        try {
            ticks++;
            if (ticks % SWEEP_EVERY_TICKS == 0) {
                sweepDue = true;
            }
            if (sweepDue) {
                sweep();
                sweepDue = false;
            }
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
            // A write that timed out may still have happened: the next tick looks for what it left.
            sweepDue = true;
            if (System.nanoTime() - lastFailureLogNanos > TimeUnit.SECONDS.toNanos(10)) {
                lastFailureLogNanos = System.nanoTime();
                LOG.warn("demo load: a write failed ({} failures so far): {}", failures, e.toString());
            }
        }
        if (System.nanoTime() - lastStatsNanos > STATS_EVERY.toNanos()) {
            lastStatsNanos = System.nanoTime();
            LOG.info(
                    "demo load: {} writes ({} transactions), {} failures; {} pods, {} config maps, {} rollouts",
                    etcd.writes(),
                    etcd.transactions(),
                    failures,
                    pods.size(),
                    configMaps.size(),
                    rollouts);
        }
    }

    /**
     * Namespaces, nodes, the backups' CRD and the backups, the deployments with their replica
     * sets (a transaction each) and the node leases, all created now.
     */
    private void seed() throws InterruptedException, ExecutionException, TimeoutException {
        for (String namespace : NAMESPACES) {
            etcd.put("/registry/namespaces/" + namespace, DemoObjects.namespace(namespace, started));
        }
        for (int n = 1; n <= NODES; n++) {
            etcd.put("/registry/minions/node-" + n, DemoObjects.node("node-" + n, started, Instant.now()));
        }
        etcd.put(CustomObjects.definitionKey("/registry"), CustomObjects.definition(started));
        for (Backup backup : backups) {
            etcd.put(backup.key(), backup.value());
        }
        for (App app : apps) {
            etcd.txn(
                    List.of(),
                    List.of(
                            putDeployment(app, app.templateHash, app.generation, app.templateSince),
                            putReplicaSet(app, app.templateHash, app.generation, app.replicas, app.templateSince)));
        }
        for (int n = 1; n <= NODES; n++) {
            etcd.put(
                    "/registry/leases/kube-node-lease/node-" + n,
                    DemoObjects.nodeLease("node-" + n, started, Instant.now()));
        }
        seeded = true;
    }

    /**
     * Deletes the demo-shaped objects this run does not know: pods of the deployments, their
     * replica sets of templates neither current nor in the kept history, {@code settings-*}
     * config maps. At start these are an earlier run's (whose state is lost; {@code --data-dir}
     * keeps etcd's data); later, what a write that failed on the client's side still did. The
     * rest is bounded by its keys (nodes, namespaces, node leases, deployments, the CRD and the
     * backups are written to fixed keys) or by its lease (events).
     */
    private void sweep() throws InterruptedException, ExecutionException, TimeoutException {
        List<String> unknown = new ArrayList<>();
        for (App app : apps) {
            String podPrefix = "/registry/pods/" + app.namespace + "/" + app.name + "-";
            for (String key : etcd.keys(podPrefix)) {
                if (POD_SUFFIX.matcher(key.substring(podPrefix.length())).matches() && !pods.containsKey(key)) {
                    unknown.add(key);
                }
            }
            String replicaSetPrefix = replicaSetKey(app, "");
            for (String key : etcd.keys(replicaSetPrefix)) {
                String hash = key.substring(replicaSetPrefix.length());
                if (HASH.matcher(hash).matches() && !hash.equals(app.templateHash) && !app.history.contains(hash)) {
                    unknown.add(key);
                }
            }
        }
        for (String namespace : CONFIG_MAP_NAMESPACES) {
            String prefix = "/registry/configmaps/" + namespace + "/";
            for (String key : etcd.keys(prefix + "settings-")) {
                if (CONFIG_MAP_NAME.matcher(key.substring(prefix.length())).matches() && !configMaps.containsKey(key)) {
                    unknown.add(key);
                }
            }
        }
        if (!unknown.isEmpty()) {
            etcd.deleteAll(unknown);
            swept += unknown.size();
            LOG.info(
                    "demo load: deleted {} pods, replica sets and config maps it did not write (an earlier run's,"
                            + " or a failed write's)",
                    unknown.size());
        }
    }

    // ---- pods ----------------------------------------------------------------------------

    /**
     * Keeps every deployment at its replica count as a rolling update does: a pod of the current
     * template is created while the deployment has fewer than its replicas plus
     * {@linkplain App#maxSurge() its surge}, an old template's pod deleted first otherwise; then
     * the old templates' remaining pods go, pending pods start, and a random pod is deleted
     * (and so replaced).
     */
    private void podLifecycle() throws InterruptedException, ExecutionException, TimeoutException {
        List<App> shuffled = new ArrayList<>(apps);
        Collections.shuffle(shuffled, random);
        for (App app : shuffled) {
            List<DemoObjects.Pod> mine =
                    pods.values().stream().filter(p -> p.app.equals(app.name)).toList();
            long current = mine.stream()
                    .filter(p -> p.templateHash.equals(app.templateHash))
                    .count();
            if (current < app.replicas) {
                if (mine.size() < app.replicas + app.maxSurge()) {
                    createPod(app);
                } else {
                    deletePod(mine.stream()
                            .filter(p -> !p.templateHash.equals(app.templateHash))
                            .findFirst()
                            .orElseThrow());
                }
                return;
            }
        }
        for (DemoObjects.Pod pod : pods.values()) {
            App app = appOf(pod);
            if (!pod.templateHash.equals(app.templateHash)) {
                deletePod(pod);
                return;
            }
        }
        for (DemoObjects.Pod pod : pods.values()) {
            if (pod.started == null) {
                pod.started = DemoObjects.now();
                pod.phase = "Running";
                pod.ready = true;
                etcd.put(pod.key(), DemoObjects.pod(pod));
                return;
            }
        }
        deletePod(randomPod());
    }

    private void createPod(App app) throws InterruptedException, ExecutionException, TimeoutException {
        String node = "node-" + (1 + random.nextInt(NODES));
        DemoObjects.Pod pod = new DemoObjects.Pod(
                app.namespace,
                app.name,
                app.templateHash,
                app.name + "-" + app.templateHash + "-" + DemoObjects.suffix(random, 5),
                node,
                nextIp++ % 60_000);
        etcd.txn(
                List.of(new Cmp(DemoEtcd.bytes(pod.key()), Cmp.Op.EQUAL, CmpTarget.version(0))),
                List.of(
                        DemoEtcd.putOp(pod.key(), DemoObjects.pod(pod)),
                        eventOp(
                                pod,
                                "Scheduled",
                                "Successfully assigned " + pod.namespace + "/" + pod.name + " to " + node,
                                "Normal")));
        pods.put(pod.key(), pod);
    }

    private void deletePod(DemoObjects.Pod pod) throws InterruptedException, ExecutionException, TimeoutException {
        if (pod == null) {
            return;
        }
        etcd.txn(
                List.of(),
                List.of(
                        DemoEtcd.deleteOp(pod.key()),
                        eventOp(pod, "Killing", "Stopping container " + pod.app, "Normal")));
        pods.remove(pod.key());
    }

    /** A running pod's readiness flips, or its container restarts. */
    private void podStatusChange() throws InterruptedException, ExecutionException, TimeoutException {
        DemoObjects.Pod pod = randomPod();
        if (pod == null || pod.started == null) {
            podLifecycle();
            return;
        }
        if (random.nextInt(4) == 0) {
            pod.restarts++;
            pod.ready = false;
            etcd.put(pod.key(), DemoObjects.pod(pod));
            recordEvent(pod, "BackOff", "Back-off restarting failed container " + pod.app, "Warning");
        } else {
            pod.ready = !pod.ready || random.nextBoolean();
            etcd.put(pod.key(), DemoObjects.pod(pod));
        }
    }

    private DemoObjects.Pod randomPod() {
        if (pods.isEmpty()) {
            return null;
        }
        int i = random.nextInt(pods.size());
        return pods.values().stream().skip(i).findFirst().orElse(null);
    }

    private App appOf(DemoObjects.Pod pod) {
        return apps.stream().filter(a -> a.name.equals(pod.app)).findFirst().orElseThrow();
    }

    /**
     * A new template for one deployment, in one transaction as the deployment controller's
     * writes of a finished rollout: the deployment, the new replica set, the old one scaled to
     * 0, and the deletes of the oldest replica sets beyond the deployment's
     * {@link DemoObjects#REVISION_HISTORY_LIMIT revisionHistoryLimit} of old ones. The state
     * moves on only once etcd took it.
     */
    private void rollout() throws InterruptedException, ExecutionException, TimeoutException {
        App app = apps.get(random.nextInt(apps.size()));
        Instant now = DemoObjects.now();
        int generation = app.generation + 1;
        String hash = DemoObjects.hex(app.name + generation + random.nextInt(), 10);
        List<String> history = new ArrayList<>(app.history);
        history.add(app.templateHash);
        List<String> expired =
                new ArrayList<>(history.subList(0, Math.max(0, history.size() - DemoObjects.REVISION_HISTORY_LIMIT)));
        history.removeAll(expired);
        List<Op> ops = new ArrayList<>(List.of(
                putDeployment(app, hash, generation, now),
                putReplicaSet(app, hash, generation, app.replicas, now),
                putReplicaSet(app, app.templateHash, app.generation, 0, app.templateSince)));
        for (String old : expired) {
            ops.add(DemoEtcd.deleteOp(replicaSetKey(app, old)));
        }
        etcd.txn(List.of(), ops);
        app.history.clear();
        app.history.addAll(history);
        app.templateHash = hash;
        app.generation = generation;
        app.templateSince = now;
        rollouts++;
    }

    private static Op putDeployment(App app, String templateHash, int generation, Instant updated) {
        return DemoEtcd.putOp(
                "/registry/deployments/" + app.namespace + "/" + app.name,
                DemoObjects.deployment(
                        app.namespace, app.name, templateHash, generation, app.replicas, app.created, updated));
    }

    private static Op putReplicaSet(App app, String templateHash, int generation, int replicas, Instant created) {
        return DemoEtcd.putOp(
                replicaSetKey(app, templateHash),
                DemoObjects.replicaSet(app.namespace, app.name, templateHash, generation, replicas, created));
    }

    private static String replicaSetKey(App app, String templateHash) {
        return "/registry/replicasets/" + app.namespace + "/" + app.name + "-" + templateHash;
    }

    // ---- leases, events, config maps -------------------------------------------------------

    /** A kubelet's periodic status update: the node's conditions get a new heartbeat. */
    private void nodeHeartbeat() throws InterruptedException, ExecutionException, TimeoutException {
        String node = "node-" + (1 + random.nextInt(NODES));
        etcd.put("/registry/minions/" + node, DemoObjects.node(node, started, Instant.now()));
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
                    backup.lastSuccess = DemoObjects.now();
                    backup.sizeBytes = 50_000_000L + random.nextInt(900_000_000);
                }
            }
            case "Scheduled" -> backup.phase = "Running";
            default -> backup.phase = "Scheduled";
        }
        etcd.put(backup.key(), backup.value());
    }

    private void renewNodeLease() throws InterruptedException, ExecutionException, TimeoutException {
        String node = "node-" + (1 + random.nextInt(NODES));
        etcd.put("/registry/leases/kube-node-lease/" + node, DemoObjects.nodeLease(node, started, Instant.now()));
    }

    private void recordEvent(DemoObjects.Pod pod, String reason, String message, String type)
            throws InterruptedException, ExecutionException, TimeoutException {
        if (pod == null) {
            return;
        }
        etcd.txn(List.of(), List.of(eventOp(pod, reason, message, type)));
    }

    /**
     * A put of an event under the current event lease, granted anew every
     * {@value #EVENT_LEASE_WINDOW_SECONDS} s and never kept alive: etcd deletes the window's
     * events {@value #EVENT_TTL_SECONDS} s after the grant (kube-apiserver's {@code --event-ttl}
     * works the same way, at one hour).
     */
    private Op eventOp(DemoObjects.Pod pod, String reason, String message, String type)
            throws InterruptedException, ExecutionException, TimeoutException {
        long nowSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime());
        if (eventLease == 0 || nowSeconds - eventLeaseSince >= EVENT_LEASE_WINDOW_SECONDS) {
            eventLease = etcd.grantLease(EVENT_TTL_SECONDS);
            eventLeaseSince = nowSeconds;
        }
        String name = pod.name + "." + DemoObjects.hex(pod.uid + reason + System.nanoTime(), 16);
        return DemoEtcd.putOp(
                "/registry/events/" + pod.namespace + "/" + name,
                DemoObjects.event(pod.namespace, name, pod, reason, message, type),
                eventLease);
    }

    /** A config map is created (up to {@value #MAX_CONFIG_MAPS}), updated, or deleted. */
    private void configMapChange() throws InterruptedException, ExecutionException, TimeoutException {
        if (configMaps.size() < MAX_CONFIG_MAPS) {
            String namespace = CONFIG_MAP_NAMESPACES.get(random.nextInt(CONFIG_MAP_NAMESPACES.size()));
            ConfigMap created = new ConfigMap(namespace, "settings-" + DemoObjects.suffix(random, 5));
            etcd.put(created.key(), created.value(random));
            configMaps.put(created.key(), created);
            return;
        }
        ConfigMap configMap = new ArrayList<>(configMaps.values()).get(random.nextInt(configMaps.size()));
        if (random.nextInt(5) == 0) {
            etcd.delete(configMap.key());
            configMaps.remove(configMap.key());
            return;
        }
        configMap.revision++;
        etcd.put(configMap.key(), configMap.value(random));
    }

    // ---- counts ----------------------------------------------------------------------------

    /** Writes done so far (a transaction counts once). */
    long writes() {
        return etcd.writes();
    }

    /** Transactions of more than one operation done so far. */
    long transactions() {
        return etcd.transactions();
    }

    /** Writes that failed so far. */
    long failures() {
        return failures;
    }

    /** Rollouts done so far. */
    long rollouts() {
        return rollouts;
    }

    /** Objects deleted by sweeps so far (an earlier run's, or a failed write's). */
    long swept() {
        return swept;
    }

    /**
     * Stops writing (waits up to {@value DemoEtcd#TIMEOUT_SECONDS} s for a write in flight) and
     * closes the etcd client. Idempotent.
     */
    @Override
    public void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
            try {
                if (!scheduler.awaitTermination(DemoEtcd.TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                    LOG.warn(
                            "demo load: a write still runs after {} s; closing the client anyway",
                            DemoEtcd.TIMEOUT_SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        etcd.close();
        LOG.info(
                "demo load stopped: {} writes ({} transactions), {} failures",
                etcd.writes(),
                etcd.transactions(),
                failures);
    }

    /** A config map the demo created: its Helm revision and creation time. Scheduler thread only. */
    private static final class ConfigMap {
        final String namespace;
        final String name;
        final Instant created = DemoObjects.now();
        int revision = 1;

        ConfigMap(String namespace, String name) {
            this.namespace = namespace;
            this.name = name;
        }

        String key() {
            return "/registry/configmaps/" + namespace + "/" + name;
        }

        byte[] value(Random random) {
            return DemoObjects.configMap(namespace, name, revision, created, random);
        }
    }

    /** A backup custom resource whose phase the demo moves on. Scheduler thread only. */
    private final class Backup {
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
            return CustomObjects.backup(namespace, name, database, schedule, started, 1, phase, lastSuccess, sizeBytes);
        }
    }

    /** A deployment whose pods the demo keeps at its replica count. Scheduler thread only. */
    private static final class App {
        final String namespace;
        final String name;
        final int replicas;
        final Instant created;
        /** The old templates whose replica sets (scaled to 0) are kept, oldest first. */
        final List<String> history = new ArrayList<>();

        String templateHash;
        Instant templateSince;
        int generation = 1;

        App(String namespace, String name, int replicas, Instant created) {
            this.namespace = namespace;
            this.name = name;
            this.replicas = replicas;
            this.created = created;
            this.templateSince = created;
            this.templateHash = DemoObjects.hex(namespace + name, 10);
        }

        /** The deployment's {@code maxSurge: 25%} in pods: a quarter of the replicas, rounded up. */
        int maxSurge() {
            return (replicas + 3) / 4;
        }
    }
}

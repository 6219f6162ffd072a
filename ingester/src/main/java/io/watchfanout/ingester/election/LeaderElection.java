package io.watchfanout.ingester.election;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election through etcd's election API (the {@code v3election} service, as
 * {@code etcdctl elect} uses it): ingester replicas campaign under one election name with a
 * lease of their own; the one whose key is oldest publishes, the others wait. It needs no
 * Kubernetes RBAC, only etcd, which the ingester talks to anyway.
 *
 * <p>Leadership is held only while the lease is known alive: every keep-alive answer moves a
 * deadline {@code TTL} seconds ahead, and {@link #isLeader()} turns false one third of a TTL
 * before that deadline, so a replica cut off from etcd stops publishing before another can
 * be elected. A stale leader that still had a transaction in flight is fenced by Kafka's
 * transactional id.
 *
 * <p>Thread-safety: {@link #awaitLeadership} and {@link #resign} are called by the publisher
 * thread; {@link #isLeader} from any thread.
 */
public final class LeaderElection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LeaderElection.class);

    private final Client client;
    private final ByteSequence name;
    private final ByteSequence proposal;
    private final long ttlSeconds;
    private volatile long leaseId;
    private volatile LeaderKey leaderKey;
    private volatile long validUntilNanos;
    private volatile CloseableClient keepAlive;

    /**
     * @param client jetcd client
     * @param electionName the election's name (an etcd key prefix), e.g.
     *     {@code /watchfanout/elections/watch/ingester}
     * @param identity this replica's name, stored as its proposal (host name and pid)
     * @param ttl the lease time-to-live: how long a dead leader blocks a new one; ≥ 2 s
     */
    public LeaderElection(Client client, String electionName, String identity, Duration ttl) {
        if (ttl.toSeconds() < 2) {
            throw new IllegalArgumentException("election lease TTL: " + ttl + " (expected: >= 2s)");
        }
        this.client = client;
        this.name = ByteSequence.from(electionName, StandardCharsets.UTF_8);
        this.proposal = ByteSequence.from(identity, StandardCharsets.UTF_8);
        this.ttlSeconds = ttl.toSeconds();
    }

    /**
     * Blocks until this replica is the leader: grants a lease, keeps it alive and campaigns.
     *
     * @throws InterruptedException when interrupted while waiting
     * @throws ExecutionException when etcd refuses a request (the caller retries)
     * @throws TimeoutException when etcd does not grant a lease within 10 s
     */
    public void awaitLeadership() throws InterruptedException, ExecutionException, TimeoutException {
        awaitLeadership(() -> {});
    }

    /**
     * As {@link #awaitLeadership()}, running {@code whileCampaigning} on the calling thread once the
     * campaign request is out (its lease granted and kept alive), before waiting for its answer:
     * what a replica does there never delays its campaign, and a leader that resigns meanwhile
     * elects it all the same (it learns so when {@code whileCampaigning} returns).
     *
     * @param whileCampaigning runs once per call that campaigns; must not throw
     */
    public void awaitLeadership(Runnable whileCampaigning)
            throws InterruptedException, ExecutionException, TimeoutException {
        if (isLeader()) {
            return;
        }
        release();
        long lease = client.getLeaseClient()
                .grant(ttlSeconds)
                .get(10, TimeUnit.SECONDS)
                .getID();
        leaseId = lease;
        validUntilNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(ttlSeconds);
        keepAlive = client.getLeaseClient().keepAlive(lease, new StreamObserver<>() {
            @Override
            public void onNext(LeaseKeepAliveResponse response) {
                if (response.getTTL() > 0) {
                    validUntilNanos = System.nanoTime() + TimeUnit.SECONDS.toNanos(response.getTTL());
                } else {
                    validUntilNanos = 0;
                }
            }

            @Override
            public void onError(Throwable t) {
                log.warn("keep-alive of election lease {} failed: {}", Long.toHexString(lease), t.toString());
            }

            @Override
            public void onCompleted() {}
        });
        log.info(
                "campaigning for leadership of {} as {} (lease {}, {} s)",
                name,
                proposal,
                Long.toHexString(lease),
                ttlSeconds);
        CompletableFuture<io.etcd.jetcd.election.CampaignResponse> campaign =
                client.getElectionClient().campaign(name, lease, proposal);
        whileCampaigning.run();
        try {
            leaderKey = campaign.get().getLeader();
        } catch (ExecutionException e) {
            release();
            throw e;
        }
        log.info("became the leader of {} as {}", name, proposal);
    }

    /** True while this replica leads and its lease is certainly alive. */
    public boolean isLeader() {
        long margin = TimeUnit.SECONDS.toNanos(ttlSeconds) / 3;
        return leaderKey != null && System.nanoTime() < validUntilNanos - margin;
    }

    /**
     * How much longer this replica certainly leads: until one third of a TTL before its lease's
     * deadline; zero when it does not lead. A Kafka call that can fence another publisher
     * ({@code initTransactions()}) must finish within it.
     */
    public Duration leadershipLeft() {
        long margin = TimeUnit.SECONDS.toNanos(ttlSeconds) / 3;
        long left = validUntilNanos - margin - System.nanoTime();
        return leaderKey == null || left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
    }

    /** Gives up leadership at once (resign, revoke the lease) so that another replica takes over. */
    public void resign() {
        LeaderKey key = leaderKey;
        if (key != null) {
            try {
                client.getElectionClient().resign(key).get(5, TimeUnit.SECONDS);
                log.info("resigned the leadership of {}", name);
            } catch (Exception e) {
                log.warn("could not resign the leadership of {} ({}); the lease expires instead", name, e.toString());
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        release();
    }

    private void release() {
        leaderKey = null;
        CloseableClient k = keepAlive;
        keepAlive = null;
        if (k != null) {
            k.close();
        }
        long lease = leaseId;
        leaseId = 0;
        if (lease != 0) {
            client.getLeaseClient().revoke(lease);
        }
    }

    @Override
    public void close() {
        resign();
    }
}

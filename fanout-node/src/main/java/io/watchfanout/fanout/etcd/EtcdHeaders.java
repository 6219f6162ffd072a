package io.watchfanout.fanout.etcd;

import io.etcd.jetcd.api.ResponseHeader;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * The {@code ResponseHeader} of every answer the node gives on the etcd API: etcd's
 * {@code cluster_id} and {@code raft_term} (learned from etcd's own response headers: every
 * forwarded or consistent-read answer refreshes them), a {@code member_id} that is stable per
 * node (derived from the node id, so a restarted node keeps it), and the revision of the answer.
 * Before the node has heard from etcd (or without {@code --etcd-endpoints}) cluster id and raft
 * term are 0.
 *
 * <p>A watch response's header is the same for every watcher that gets an event: {@link #field}
 * encodes it once per revision (and cluster id and raft term), not once per watcher.
 *
 * <p>Thread-safety: lock-free; the learned fields are volatile, the memoized field an immutable
 * holder behind a volatile reference (two threads may both encode one revision; either result is right).
 */
public final class EtcdHeaders {
    private final long memberId;
    private volatile long clusterId;
    private volatile long raftTerm;
    /** The last header field encoded by {@link #field}. */
    private volatile EncodedField lastField = new EncodedField(-1, 0, 0, new byte[0]);

    /** @param nodeId the node's id; its member id is a 64-bit hash of it */
    public EtcdHeaders(String nodeId) {
        CRC32 low = new CRC32();
        low.update(nodeId.getBytes(StandardCharsets.UTF_8));
        CRC32 high = new CRC32();
        high.update(("watch-fanout/" + nodeId).getBytes(StandardCharsets.UTF_8));
        this.memberId = (high.getValue() << 32) | low.getValue();
    }

    /** The node's member id in headers. */
    public long memberId() {
        return memberId;
    }

    /** etcd's cluster id, 0 until learned. */
    public long clusterId() {
        return clusterId;
    }

    /** Takes cluster id and raft term from a header etcd sent. */
    public void learn(ResponseHeader fromEtcd) {
        if (fromEtcd.getClusterId() != 0) {
            clusterId = fromEtcd.getClusterId();
        }
        if (fromEtcd.getRaftTerm() > raftTerm) {
            raftTerm = fromEtcd.getRaftTerm();
        }
    }

    /**
     * The {@code header} field (1) of a {@code WatchResponse} at {@code revision}, encoded: the bytes
     * of {@code WatchResponse.newBuilder().setHeader(at(revision)).build().toByteArray()}. Memoized for
     * the last revision asked for, so the watchers of one event share one array.
     *
     * @return an array the caller must not modify
     */
    byte[] field(long revision) {
        long cluster = clusterId;
        long term = raftTerm;
        EncodedField f = lastField;
        if (f.revision != revision || f.clusterId != cluster || f.raftTerm != term) {
            ResponseHeader h = ResponseHeader.newBuilder()
                    .setClusterId(cluster)
                    .setMemberId(memberId)
                    .setRevision(revision)
                    .setRaftTerm(term)
                    .build();
            f = new EncodedField(
                    revision,
                    cluster,
                    term,
                    io.etcd.jetcd.api.WatchResponse.newBuilder()
                            .setHeader(h)
                            .build()
                            .toByteArray());
            lastField = f;
        }
        return f.bytes;
    }

    /** An encoded header field and what it was encoded from. */
    private record EncodedField(long revision, long clusterId, long raftTerm, byte[] bytes) {}

    /** The header of an answer at {@code revision}. */
    public ResponseHeader at(long revision) {
        return ResponseHeader.newBuilder()
                .setClusterId(clusterId)
                .setMemberId(memberId)
                .setRevision(revision)
                .setRaftTerm(raftTerm)
                .build();
    }
}

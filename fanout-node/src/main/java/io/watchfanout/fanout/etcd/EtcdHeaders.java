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
 * <p>Thread-safety: lock-free; the learned fields are volatile.
 */
public final class EtcdHeaders {
    private final long memberId;
    private volatile long clusterId;
    private volatile long raftTerm;

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

package io.watchfanout.ingester.support;

import java.util.Map;
import org.apache.kafka.common.errors.PolicyViolationException;
import org.apache.kafka.server.policy.AlterConfigPolicy;

/**
 * A broker's {@code alter.config.policy.class.name} that refuses every request setting a topic's
 * {@code min.cleanable.dirty.ratio}, as a cluster whose operators manage compaction themselves
 * may; topics created without it pass (KRaft runs the policy on creations too). The broker of a
 * test loads it from the test class path.
 */
public final class RefusingAlterConfigPolicy implements AlterConfigPolicy {
    /** The reason the broker gives. */
    public static final String REASON = "compaction settings are managed by the operators";

    @Override
    public void validate(RequestMetadata request) {
        if (request.configs().containsKey("min.cleanable.dirty.ratio")) {
            throw new PolicyViolationException(REASON);
        }
    }

    @Override
    public void configure(Map<String, ?> configs) {}

    @Override
    public void close() {}
}

package io.watchfanout.ingester.topics;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.config.TopicConfig;

/**
 * How eagerly Kafka compacts the state topic, so that a reader rebuilding from it (a fan-out node
 * at start, the ingester's resync) reads little more than one record per key however long the
 * keys have churned (docs/ARCHITECTURE.md, "Kafka topics").
 *
 * <p>Kafka never compacts a topic's active segment, and cleans the rolled segments only once the
 * dirty part (records written since the last pass, active segment excluded) is at least
 * {@code min.cleanable.dirty.ratio} of the log. A reader therefore reads the compacted part, up to
 * ratio / (1 − ratio) of it again in superseded records, and the whole active segment:
 * <ul>
 *   <li>{@code segment.ms} = {@link #SEGMENT} (1 min; the ingester used 1 h, Kafka's default is
 *       7 d): the active segment holds at most a minute of updates, a few thousand records at
 *       thousands of updates a minute, where an hour held 111,409 records for 171 keys;
 *   <li>{@code min.cleanable.dirty.ratio} = {@link #DIRTY_RATIO} (0.1; Kafka's default 0.5): the
 *       superseded records before the active segment stay under 11 % of the compacted part (with
 *       0.5, as much again as the compacted part). The cost is the cleaner's: it rewrites the
 *       log each time the dirty part reaches that share, about ten bytes cleaned per byte written
 *       where 0.5 costs two;
 *   <li>{@code min.compaction.lag.ms} = {@link #MIN_LAG} (0, Kafka's default, set so that a
 *       broker-wide {@code log.cleaner.min.compaction.lag.ms} does not keep superseded records
 *       readable): no reader needs a key's older values.
 * </ul>
 * Neither setting shortens how long a tombstone stays readable: the cleaner keeps it
 * {@code delete.retention.ms} after the pass that first cleans it, whenever that pass runs, so
 * {@link io.watchfanout.schema.StateScan}'s rule (a read shorter than half of that sees every
 * deletion) holds as before. {@code max.compaction.lag.ms} is left at Kafka's default (none): the
 * ratio bounds the dirty part already, and a lag would force a rewrite of the whole log on a
 * timer however little changed. {@code segment.bytes} is left at the broker's default (1 GiB): a
 * minute of etcd's writes stays far below it.
 *
 * <p>The broker runs the cleaner: up to {@code log.cleaner.backoff.ms} (15 s by default) passes
 * between the moment a log becomes cleanable and its pass, so a reader also reads up to that much
 * of updates. An existing state topic that compacts less eagerly than this gets these values when
 * the ingester starts ({@link #toChange}); a topic an operator set to compact sooner keeps its
 * values.
 *
 * <p>Stateless; thread-safe.
 */
public final class StateCompaction {
    /** {@code segment.ms} of the state topic: how long the active segment stays open, uncompacted. */
    public static final Duration SEGMENT = Duration.ofMinutes(1);
    /** {@code min.cleanable.dirty.ratio} of the state topic: the dirty share of the log that starts a pass. */
    public static final double DIRTY_RATIO = 0.1;
    /** {@code min.compaction.lag.ms} of the state topic: how long a record stays out of compaction. */
    public static final Duration MIN_LAG = Duration.ZERO;

    private StateCompaction() {}

    /** The settings of a new state topic, in a fixed order: name → value as Kafka takes it. */
    static Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put(TopicConfig.SEGMENT_MS_CONFIG, Long.toString(SEGMENT.toMillis()));
        s.put(TopicConfig.MIN_CLEANABLE_DIRTY_RATIO_CONFIG, Double.toString(DIRTY_RATIO));
        s.put(TopicConfig.MIN_COMPACTION_LAG_MS_CONFIG, Long.toString(MIN_LAG.toMillis()));
        return s;
    }

    /**
     * The settings an existing state topic must change to compact at least as eagerly as a new
     * one: each of {@link #settings()} whose current value is larger (a longer segment, a higher
     * ratio, a longer lag), missing or not a number. Smaller values are an operator's choice and
     * stay.
     *
     * @param current the topic's effective values by name, as {@code DescribeConfigs} gives them
     *     (a name may be missing)
     * @return name → new value, in the order of {@link #settings()}; empty when nothing changes
     */
    static Map<String, String> toChange(Map<String, String> current) {
        Map<String, String> change = new LinkedHashMap<>();
        settings().forEach((name, wanted) -> {
            if (!atMost(current.get(name), Double.parseDouble(wanted))) {
                change.put(name, wanted);
            }
        });
        return change;
    }

    private static boolean atMost(String value, double limit) {
        if (value == null) {
            return false;
        }
        try {
            return Double.parseDouble(value.trim()) <= limit;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}

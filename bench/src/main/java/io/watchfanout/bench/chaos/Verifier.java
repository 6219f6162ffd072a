package io.watchfanout.bench.chaos;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Compares what a consumer received (the events topic, one watcher) with etcd's own history:
 * every expected event exactly once, nothing else, in revision order.
 *
 * <p>Events are compared whole ({@link Ev}: revision, key, type, value hash), so an event with
 * a wrong value counts as one lost (the right one never came) and one unexpected. Pure logic,
 * no I/O; thread-safe (stateless).
 */
public final class Verifier {
    /** How many examples of each kind a result keeps for the report. */
    static final int EXAMPLES = 5;

    private Verifier() {}

    /**
     * One event as both sides can state it.
     *
     * @param revision the etcd revision of the event (the deletion revision for a delete)
     * @param key the key
     * @param type {@link #ADDED}, {@link #MODIFIED} or {@link #DELETED}
     * @param valueHash a hash of the value for a put, 0 for a delete
     */
    public record Ev(long revision, String key, int type, int valueHash) {
        @Override
        public String toString() {
            return revision + " " + TYPES[type] + " " + key;
        }
    }

    /** A put that created the key (version 1). */
    public static final int ADDED = 1;
    /** Any other put. */
    public static final int MODIFIED = 2;
    /** A delete (or a lease expiry). */
    public static final int DELETED = 3;

    private static final String[] TYPES = {"?", "ADDED", "MODIFIED", "DELETED"};

    /**
     * The outcome of one comparison.
     *
     * @param expected events etcd says the consumer should have received
     * @param received events the consumer received (duplicates included)
     * @param lost expected events never received
     * @param duplicated extra copies of events received more than once
     * @param unexpected received events that are not in etcd's history (or not in the expected range)
     * @param outOfOrder received events whose revision is lower than the one before
     * @param examples a few of each kind, for the report
     */
    public record Result(
            long expected,
            long received,
            long lost,
            long duplicated,
            long unexpected,
            long outOfOrder,
            List<String> examples) {
        /** Whether the consumer received exactly the expected events, each once, in order. */
        public boolean ok() {
            return lost == 0 && duplicated == 0 && unexpected == 0 && outOfOrder == 0;
        }

        /** Sums two results (examples of both, bounded). */
        public Result plus(Result o) {
            List<String> ex = new ArrayList<>(examples);
            for (String e : o.examples) {
                if (ex.size() < 4 * EXAMPLES) {
                    ex.add(e);
                }
            }
            return new Result(
                    expected + o.expected,
                    received + o.received,
                    lost + o.lost,
                    duplicated + o.duplicated,
                    unexpected + o.unexpected,
                    outOfOrder + o.outOfOrder,
                    ex);
        }

        /** The result of comparing nothing with nothing. */
        public static Result empty() {
            return new Result(0, 0, 0, 0, 0, 0, List.of());
        }
    }

    /**
     * Compares {@code received}, in the order it arrived, with {@code expected}, in etcd's order.
     *
     * @param label names the consumer in the examples
     */
    public static Result compare(String label, List<Ev> expected, List<Ev> received) {
        Map<Ev, Integer> want = new HashMap<>(expected.size() * 2);
        for (Ev e : expected) {
            want.merge(e, 1, Integer::sum);
        }
        Map<Ev, Integer> got = new HashMap<>(received.size() * 2);
        List<String> examples = new ArrayList<>();
        long outOfOrder = 0;
        long previous = Long.MIN_VALUE;
        for (Ev e : received) {
            got.merge(e, 1, Integer::sum);
            if (e.revision() < previous) {
                outOfOrder++;
                example(examples, label + ": out of order: " + e + " after revision " + previous);
            }
            previous = Math.max(previous, e.revision());
        }
        long lost = 0;
        long duplicated = 0;
        long unexpected = 0;
        for (Ev e : expected) {
            int n = got.getOrDefault(e, 0);
            int w = want.get(e);
            if (n < w) {
                lost += w - n;
                want.put(e, n); // count each missing copy once
                example(examples, label + ": lost " + e);
            }
        }
        for (Map.Entry<Ev, Integer> g : got.entrySet()) {
            int w = want.getOrDefault(g.getKey(), 0);
            int n = g.getValue();
            if (w == 0) {
                unexpected += n;
                example(examples, label + ": unexpected " + g.getKey() + (n > 1 ? " (" + n + " times)" : ""));
                if (n > 1) {
                    duplicated += n - 1;
                    unexpected -= n - 1;
                }
            } else if (n > w) {
                duplicated += n - w;
                example(examples, label + ": duplicated " + g.getKey() + " (" + n + " times)");
            }
        }
        return new Result(expected.size(), received.size(), lost, duplicated, unexpected, outOfOrder, examples);
    }

    private static void example(List<String> examples, String text) {
        if (examples.size() < EXAMPLES) {
            examples.add(text);
        }
    }

    /**
     * The events of {@code history} (etcd's order) a watcher of {@code prefix} that resumed from
     * {@code start} and got as far as {@code end} should have received: those with a key under the
     * prefix and a revision in (start, end], except those in a gap it skipped by listing again
     * (each gap (from, to]: it lost its place at {@code from} and listed at {@code to}).
     */
    public static List<Ev> expectedFor(List<Ev> history, String prefix, long start, long end, List<long[]> gaps) {
        List<Ev> out = new ArrayList<>();
        for (Ev e : history) {
            long r = e.revision();
            if (r <= start || r > end || !e.key().startsWith(prefix)) {
                continue;
            }
            boolean skipped = false;
            for (long[] g : gaps) {
                if (r > g[0] && r <= g[1]) {
                    skipped = true;
                    break;
                }
            }
            if (!skipped) {
                out.add(e);
            }
        }
        return out;
    }
}

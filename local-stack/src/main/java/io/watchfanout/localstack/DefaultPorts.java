package io.watchfanout.localstack;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;

/**
 * Places the ports that the user did not give (defaults such as 9100, and ports derived from
 * others such as {@code --etcd-port + 1}): each goes to its usual place, or when another part's
 * port is there, to the first port above it that is nobody's. So defaults never refuse a start by
 * colliding with each other or with a port the user gave ({@code --etcd-port 23790} would put
 * etcd's peer on 23791, a node's etcd API port); only two ports the user gave can collide, and
 * {@link StackConfig} refuses that naming both flags.
 *
 * <p>Use: {@link #given} every port the user gave first, then {@link #place} the others in a
 * fixed order. Not thread-safe; one per configuration.
 */
final class DefaultPorts {
    private final Set<Integer> taken = new HashSet<>();

    /** Ports the user gave: never moved, and avoided by every port placed after. */
    void given(List<Integer> ports) {
        taken.addAll(ports);
    }

    /**
     * Places {@code count} ports two apart ({@code base, base + 2, ...}: one per Kafka broker) on
     * the first base at or above {@code usual} whose ports are all free and at most 65535, and
     * takes them.
     *
     * @return the base: {@code usual} when its ports are free; {@code usual} again when no base up
     *     to 65535 is (then {@link StackConfig}'s checks name the flag)
     */
    int place(int usual, int count) {
        for (int base = usual; base + 2 * (count - 1) <= 65535; base++) {
            if (free(base, count)) {
                take(base, count);
                return base;
            }
        }
        take(usual, count);
        return usual;
    }

    private boolean free(int base, int count) {
        for (int i = 0; i < count; i++) {
            if (taken.contains(base + 2 * i)) {
                return false;
            }
        }
        return true;
    }

    private void take(int base, int count) {
        for (int i = 0; i < count; i++) {
            taken.add(base + 2 * i);
        }
    }

    /** The ports of a Kafka flag: {@code count} ports two apart from {@code base}. */
    static List<Integer> spaced(int base, int count) {
        return IntStream.range(0, count).mapToObj(i -> base + 2 * i).toList();
    }
}

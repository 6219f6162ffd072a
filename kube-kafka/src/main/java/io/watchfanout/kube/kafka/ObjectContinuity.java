package io.watchfanout.kube.kafka;

import java.util.HashMap;
import java.util.Map;

/**
 * Proves per object that a reader of a change topic missed and repeated nothing, as
 * {@code RevisionChain} proves it for the events topic: each event names the object's
 * resourceVersion before it ({@link KubeWatchEvent#previousResourceVersion()}), which must equal
 * the resourceVersion of the last event seen for that object (0 after its deletion, as for a
 * new object). The first event of an object is trusted; so is a resync entry (history before a
 * resync is lost, the entry is the object's state).
 *
 * <p>Memory: one entry per object seen (deleted objects included, until {@link #forget}). Not
 * thread-safe: one instance per reading thread.
 */
public final class ObjectContinuity {
    private static final long DELETED = 0;

    private final Map<String, Long> last = new HashMap<>();

    /** A check that has seen nothing yet. */
    public ObjectContinuity() {}

    /**
     * Checks {@code event} against the last event of its object and records it.
     *
     * @throws ObjectContinuityException when its previous resourceVersion is not the last one seen
     *     (a gap or a repeat); the state is left unchanged
     * @throws IllegalArgumentException when the event does not carry its previous resourceVersion
     *     (read without headers)
     */
    public void accept(KubeWatchEvent event) {
        if (event.previousResourceVersion() == KubeWatchEvent.UNKNOWN) {
            throw new IllegalArgumentException(event
                    + " carries no previous resourceVersion (expected: the record's ce_prevresourceversion header)");
        }
        String object = event.qualifiedResource() + " " + event.key();
        Long before = last.get(object);
        if (before != null && !event.resync() && event.previousResourceVersion() != before) {
            throw new ObjectContinuityException(event + " follows resourceVersion " + event.previousResourceVersion()
                    + " but the last event of " + object + " had " + (before == DELETED ? "deleted it" : before)
                    + (event.previousResourceVersion() > before ? " (a gap)" : " (a repeat)"));
        }
        if (before != null && event.resourceVersion() <= before && !event.resync()) {
            throw new ObjectContinuityException(
                    event + " does not advance past resourceVersion " + before + " of " + object + " (a repeat)");
        }
        last.put(object, event.type() == KubeWatchEvent.Type.DELETED ? DELETED : event.resourceVersion());
    }

    /** The last resourceVersion seen of an object ({@link KubeWatchEvent#qualifiedResource()}, key), 0 when deleted, -1 when never seen. */
    public long last(String qualifiedResource, String key) {
        return last.getOrDefault(qualifiedResource + " " + key, -1L);
    }

    /** Forgets an object (e.g. deleted objects after a while, to bound memory). */
    public void forget(String qualifiedResource, String key) {
        last.remove(qualifiedResource + " " + key);
    }
}

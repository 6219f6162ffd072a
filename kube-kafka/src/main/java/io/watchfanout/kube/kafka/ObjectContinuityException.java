package io.watchfanout.kube.kafka;

/**
 * A change topic broke an object's chain of resourceVersions: an event was missed or repeated.
 * Readers must stop rather than skip, as for the events topic's {@code RevisionChainException}.
 */
public final class ObjectContinuityException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message what was expected and what came instead */
    public ObjectContinuityException(String message) {
        super(message);
    }
}

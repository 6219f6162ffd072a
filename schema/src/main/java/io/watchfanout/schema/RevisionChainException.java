package io.watchfanout.schema;

/**
 * The events topic broke the revision chain: a gap, a repeat, or a revision split apart.
 * Readers must stop rather than skip (docs/ARCHITECTURE.md, invariants 1 and 8).
 */
public final class RevisionChainException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** @param message what was expected and what came instead */
    public RevisionChainException(String message) {
        super(message);
    }
}

package io.watchfanout.ingester.topics;

/**
 * An existing topic has settings the ingester cannot work with; it refuses to start
 * rather than publish somewhere that would lose or reorder events.
 */
public final class TopicMisconfiguredException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message the topic, the setting, its value and what was expected */
    public TopicMisconfiguredException(String message) {
        super(message);
    }
}

package io.watchfanout.ingester.publish;

/**
 * How a publish session ended, as the publisher loop acts on it: {@link Retriable} (a new
 * session follows) or {@link Fatal} (the ingester stops for good). Each kind says what the loop
 * does; which exception of Kafka, etcd or the ingester's own parts is which kind is decided in
 * one place, the ingester's {@code PublishFailures}.
 *
 * <p>Immutable; the cause is the exception that ended the session.
 */
public abstract sealed class PublishFailure extends Exception {
    private static final long serialVersionUID = 1L;

    private PublishFailure(String message, Throwable cause) {
        super(message, cause);
    }

    /** The publisher outlasts the failure: it starts another session from its resume point. */
    public abstract static sealed class Retriable extends PublishFailure {
        private static final long serialVersionUID = 1L;

        private Retriable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * etcd or Kafka failed or did not answer in time: the publisher waits (doubling up to
     * {@code --retry-backoff-max}) and starts a new session.
     */
    public static final class DependencyDown extends Retriable {
        private static final long serialVersionUID = 1L;

        private final String dependency;

        /**
         * @param dependency which service the publisher waits for, as the log names it: "Kafka at
         *     host:port", "etcd at url,...", or both joined by "or" when the failure does not tell
         * @param cause the failure; its {@code toString()} is part of the message
         */
        public DependencyDown(String dependency, Throwable cause) {
            super("waiting for " + dependency + ": " + cause, cause);
            this.dependency = dependency;
        }

        /** The service the publisher waits for, e.g. "Kafka at 127.0.0.1:9092". */
        public String dependency() {
            return dependency;
        }
    }

    /**
     * The producer's epoch was bumped: another ingester took over the transactional id, or the
     * transaction coordinator aborted a transaction that outlived {@code transaction.timeout.ms}.
     * Kafka's producer fencing (KIP-98) is what keeps a restarted or duplicate ingester from
     * publishing twice. An elected ingester gives up its leadership; any other one tells the two
     * cases apart by whether the events topic moves on without it, and stops for good when it does.
     */
    public static final class Fenced extends Retriable {
        private static final long serialVersionUID = 1L;

        /**
         * @param message who was fenced and by what
         * @param cause Kafka's exception
         */
        public Fenced(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The election lease was not renewed in time: another replica may lead by now. The publisher
     * resigns, closing its producer before it can fence the new leader, and campaigns again.
     */
    public static final class LeadershipLost extends Retriable {
        private static final long serialVersionUID = 1L;

        /** Creates the failure; it has no cause (the lease's keep-alive says nothing more). */
        public LeadershipLost() {
            super("lost the leadership (lease not renewed in time)", null);
        }
    }

    /**
     * A retry cannot help (misconfigured topics, an event larger than a record, an undecodable
     * record in the events topic): the ingester logs the reason, stops publishing and exits 1.
     */
    public static final class Fatal extends PublishFailure {
        private static final long serialVersionUID = 1L;

        /**
         * @param reason what the log, {@code /readyz} and {@code /livez} say, e.g. "refusing to
         *     start: topic t.events has 3 partitions (expected: 1)"
         * @param cause the failure, whose stack trace the log shows
         */
        public Fatal(String reason, Throwable cause) {
            super(reason, cause);
        }
    }
}

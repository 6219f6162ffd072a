package io.watchfanout.ingester.publish;

/**
 * The producer's epoch was bumped: another ingester took over the transactional id, or the
 * transaction coordinator aborted a transaction that outlived {@code transaction.timeout.ms}.
 * Kafka's producer fencing (KIP-98) is what keeps a restarted or duplicate ingester from
 * publishing twice; the ingester tells the two cases apart by whether the events topic moves
 * on without it.
 */
public final class IngesterFencedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** @param message who was fenced and by what */
  public IngesterFencedException(String message, Throwable cause) {
    super(message, cause);
  }
}

package io.watchfanout.ingester.publish;

/**
 * Another ingester took over the transactional id: this one must stop writing at once.
 * Kafka's producer fencing (KIP-98) is what keeps a restarted or duplicate ingester from
 * publishing twice.
 */
public final class IngesterFencedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** @param message who was fenced and by what */
  public IngesterFencedException(String message, Throwable cause) {
    super(message, cause);
  }
}

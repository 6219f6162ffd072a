package io.watchfanout.ingester.publish;

/**
 * A whole-keyspace watch skipped a revision or went back: it cannot prove it delivered
 * every event, so the ingester re-watches from its last published revision + 1.
 */
public final class DenseRevisionException extends Exception {
  private static final long serialVersionUID = 1L;

  /** @param message the revisions expected and seen */
  public DenseRevisionException(String message) {
    super(message);
  }
}

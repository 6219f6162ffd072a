package io.watchfanout.kube.codec.select;

/**
 * A {@code labelSelector} or {@code fieldSelector} that kube-apiserver would refuse; its message
 * is the 400 Status's message (reason BadRequest).
 */
public final class SelectorException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong and what was expected */
    public SelectorException(String message) {
        super(message, null, false, false);
    }
}

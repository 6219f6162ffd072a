package io.watchfanout.kube.codec;

/**
 * A stored value the node cannot turn into the object a client asked for: bytes that are not a
 * valid message of the envelope's kind, an unknown kind, a storage form the node does not read
 * (CBOR), or an encrypted value. kube-apiserver answers such an object with an error naming its
 * key; so does the node, never skipping it silently.
 */
public final class UndecodableObjectException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int item;

    /** @param reason what is wrong with the value, for a Status message and the log */
    public UndecodableObjectException(String reason) {
        this(reason, -1);
    }

    /**
     * @param reason what is wrong with the value
     * @param item the index of the failing item in the page being written, or -1
     */
    public UndecodableObjectException(String reason, int item) {
        super(reason, null, false, false);
        this.item = item;
    }

    /** The index of the failing item in the page being written, or -1 when not known. */
    public int item() {
        return item;
    }
}

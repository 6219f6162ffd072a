package io.watchfanout.fanout.kube;

/**
 * A stored value the node cannot turn into the object a client asked for: bytes that are not a
 * valid message of the envelope's kind, an unknown kind, a storage form the node does not read
 * (CBOR), or an encrypted value. kube-apiserver answers such an object with an error naming its
 * key; so does the node, never skipping it silently.
 */
public final class UndecodableObjectException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param reason what is wrong with the value, for a Status message and the log */
    public UndecodableObjectException(String reason) {
        super(reason, null, false, false);
    }
}

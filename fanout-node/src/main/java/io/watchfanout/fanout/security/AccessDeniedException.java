package io.watchfanout.fanout.security;

/**
 * The identity may not do this with this range: HTTP 403 {@code Forbidden} / gRPC
 * {@code PERMISSION_DENIED} (a canceled watch with etcd's reason on the etcd API).
 */
public final class AccessDeniedException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message what was refused, naming the identity, the verb and the normalised range */
    public AccessDeniedException(String message) {
        super(message, null, false, false);
    }
}

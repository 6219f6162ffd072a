package io.watchfanout.fanout.security;

/**
 * A watch the Kubernetes API's authorizers ({@code --authorization-mode}) allowed: the request as
 * they saw it, for the audit trail, and the decision taken again when the policy changes (a
 * binding, a role or a pod changed), never per event. {@link AccessControl#admitWatch(Identity,
 * io.watchfanout.common.KeyRange, String, WatchAuthorization)} keeps it with the grant; a
 * decision that no longer allows revokes the grant, which ends the watch with a 403 ERROR event.
 *
 * <p>Implementations are thread-safe: {@link #recheck} runs on the thread that applied the
 * policy change.
 */
public interface WatchAuthorization {
    /** kube-apiserver's authorizer attributes of the watch. */
    RequestAttributes request();

    /**
     * Decides the watch again with the policy now in force.
     *
     * @return null while it is allowed; otherwise kube-apiserver's denial message
     */
    String recheck();
}

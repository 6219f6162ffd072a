package io.watchfanout.fanout.security;

/** The node's listeners, each with its own set of authentication methods ({@code --http-authn}, {@code --etcd-api-authn}). */
public enum Listener {
    /** The HTTP port: {@code /v1/watch}, {@code /v1/kv} and etcd's JSON gateway {@code /v3/*}. */
    HTTP,
    /** The etcd v3 gRPC port ({@code --etcd-api-port}). */
    ETCD_API
}

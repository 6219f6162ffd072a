package io.watchfanout.kube.kafka;

/**
 * What one events-topic record is for a Kubernetes reader: a watch event, a record that carries no
 * object (skipped, never an error), or a value that cannot be decoded (with the reason, to be
 * reported, never dropped silently).
 */
public sealed interface DecodeResult {

    /** A watch event of a Kubernetes object. */
    record Decoded(KubeWatchEvent event) implements DecodeResult {}

    /** A record that is not a Kubernetes object's change; not an error. */
    record Skipped(SkipReason reason) implements DecodeResult {}

    /**
     * A Kubernetes object's change whose value cannot be decoded, as kube-apiserver would refuse to
     * decode it.
     *
     * @param key the etcd key
     * @param revision the etcd revision of the record
     * @param reason the kind of failure
     * @param message what is wrong, for the errors topic and the log
     */
    record Undecodable(String key, long revision, Reason reason, String message) implements DecodeResult {}

    /** Why a record carries no object. */
    enum SkipReason {
        /** A {@code Progress} record (including heartbeats). */
        PROGRESS,
        /** A {@code Resync} record; its entries follow as events with {@code resync = true}. */
        RESYNC,
        /** A key outside the Kubernetes prefix or of no resource served (masterleases, compact_rev_key, …). */
        NOT_KUBERNETES
    }

    /** Why a value cannot be decoded. */
    enum Reason {
        /** Bytes of no known storage form, a malformed envelope or message, a record without a body. */
        CORRUPT,
        /** Stored as CBOR, which is not read. */
        CBOR,
        /** Encrypted at rest and not opened (no key configured, a KMS provider, a failed decryption). */
        ENCRYPTED,
        /** A protobuf object whose group, version and kind the schema does not hold. */
        NO_SCHEMA,
        /** A deletion whose record holds no previous value to send. */
        NO_PREVIOUS_VALUE
    }
}

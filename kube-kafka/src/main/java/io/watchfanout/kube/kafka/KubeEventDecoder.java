package io.watchfanout.kube.kafka;

import com.google.protobuf.Descriptors.Descriptor;
import io.watchfanout.common.JsonBuffer;
import io.watchfanout.kube.codec.AtRest;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.KubeWatchFrames;
import io.watchfanout.kube.codec.ProtoJsonWriter;
import io.watchfanout.kube.codec.StoredObject;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import java.time.Instant;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * Turns a record of the events topic into a Kubernetes watch event, the way the node's Kubernetes
 * API renders its watch frames: an etcd PUT is ADDED (the key's first version, or a key new to the
 * published state) or MODIFIED with the new object at its mod revision; a DELETE is DELETED with
 * the object as it was before ({@code prev_kv}) at the deletion's revision. The object is written
 * as kube-apiserver's JSON straight from the stored bytes ({@link ProtoJsonWriter}; JSON-stored
 * custom resources and CRDs parsed and written again), values encrypted at rest opened first
 * ({@link AtRest}, when the process was given the keys).
 *
 * <p>Custom resources are discovered live: a CRD's event updates the resources this decoder serves
 * before the next record ({@link #learn} seeds them from a snapshot when reading starts in the middle
 * of the topic). {@code Progress} and {@code Resync} records and keys of no Kubernetes resource are
 * {@link DecodeResult.Skipped}; a value that cannot be decoded is {@link DecodeResult.Undecodable}
 * with the reason, never an exception.
 *
 * <p>Secrets: the values of {@code data} and {@code stringData} are redacted ({@link SecretRedaction})
 * unless the decoder was made with {@link SecretPolicy#PUBLISH}.
 *
 * <p>Not thread-safe: one decoder per reading thread (it keeps the custom resources seen).
 */
public final class KubeEventDecoder {

    /** Whether Secrets' values leave the cluster. */
    public enum SecretPolicy {
        /** Values of {@code data} and {@code stringData} replaced by empty strings (the default). */
        REDACT,
        /**
         * Values published as stored: anyone who can read the topics reads every Secret of the
         * cluster. For an operator who opts in explicitly.
         */
        PUBLISH
    }

    private final ServedResources resources;
    private final SecretPolicy secrets;
    private final KubeSchema schema = KubeSchema.standard();
    private final ProtoJsonWriter writer = ProtoJsonWriter.create();
    private final JsonBuffer buffer = new JsonBuffer(4096);

    /**
     * A decoder of the objects under {@code etcdPrefix}.
     *
     * @param etcdPrefix kube-apiserver's {@code --etcd-prefix} ({@code /registry} by default)
     * @param secrets whether Secrets' values are redacted
     */
    public KubeEventDecoder(String etcdPrefix, SecretPolicy secrets) {
        if (!etcdPrefix.startsWith("/")) {
            throw new IllegalArgumentException(
                    "etcd prefix " + etcdPrefix + " (expected: a key prefix starting with /, e.g. /registry)");
        }
        this.resources = new ServedResources(KubeResources.builtIn(etcdPrefix));
        this.secrets = Objects.requireNonNull(secrets, "secrets");
    }

    /** The resources served now: the built-ins and the custom resources of the CRDs seen so far. */
    public KubeResources resources() {
        return resources.current();
    }

    /**
     * Takes note of a stored key-value read outside the events (a snapshot of the state topic): a
     * CRD defines its resource. Other keys are ignored.
     */
    public void learn(KeyValue kv) {
        Optional<KubeResources.ObjectKey> key =
                resources.current().parse(kv.getKey().toByteArray());
        if (key.isPresent() && resources.isDefinitions(key.get().resource())) {
            try {
                resources.define(kv.getKey().toStringUtf8(), AtRest.plain(kv));
            } catch (UndecodableObjectException e) {
                resources.define(kv.getKey().toStringUtf8(), null);
            }
        }
    }

    /**
     * Decodes one events-topic record.
     *
     * @param record the record's value
     * @param time the record's timestamp (when the ingester received the event), or null
     * @return the watch event, the reason it is skipped, or why it cannot be decoded
     */
    public DecodeResult decode(EventsRecord record, Instant time) {
        switch (record.getBodyCase()) {
            case PROGRESS:
                return new DecodeResult.Skipped(DecodeResult.SkipReason.PROGRESS);
            case RESYNC:
                return new DecodeResult.Skipped(DecodeResult.SkipReason.RESYNC);
            case EVENT:
                return decodeEvent(record.getEvent(), time);
            default:
                return new DecodeResult.Undecodable(
                        "", 0, DecodeResult.Reason.CORRUPT, "an events record without a known body");
        }
    }

    private DecodeResult decodeEvent(Event e, Instant time) {
        byte[] keyBytes = e.getKv().getKey().toByteArray();
        Optional<KubeResources.ObjectKey> parsed = resources.current().parse(keyBytes);
        if (parsed.isEmpty()) {
            return new DecodeResult.Skipped(DecodeResult.SkipReason.NOT_KUBERNETES);
        }
        KubeResources.ObjectKey key = parsed.get();
        String keyText = e.getKv().getKey().toStringUtf8();
        KubeWatchEvent.Type type;
        KeyValue object;
        long resourceVersion;
        long previous;
        if (e.getType() == Event.Type.DELETE) {
            if (!e.hasPrevKv()) {
                if (resources.isDefinitions(key.resource())) {
                    resources.define(keyText, null);
                }
                return undecodable(
                        keyText,
                        e,
                        DecodeResult.Reason.NO_PREVIOUS_VALUE,
                        "its deletion record holds no previous value");
            }
            type = KubeWatchEvent.Type.DELETED;
            object = e.getPrevKv();
            resourceVersion = e.getKv().getModRevision() > 0 ? e.getKv().getModRevision() : e.getRevision();
            previous = e.getPrevKv().getModRevision();
        } else {
            type = e.getKv().getVersion() == 1 || !e.hasPrevKv()
                    ? KubeWatchEvent.Type.ADDED
                    : KubeWatchEvent.Type.MODIFIED;
            object = e.getKv();
            resourceVersion = e.getKv().getModRevision();
            previous = e.hasPrevKv() ? e.getPrevKv().getModRevision() : 0;
        }
        byte[] plain;
        try {
            plain = AtRest.plain(object);
        } catch (UndecodableObjectException ex) {
            return undecodable(keyText, e, DecodeResult.Reason.ENCRYPTED, ex.getMessage());
        }
        if (resources.isDefinitions(key.resource())) {
            resources.define(keyText, type == KubeWatchEvent.Type.DELETED ? null : plain);
        }
        KubeResource r = key.resource();
        byte[] json;
        try {
            json = render(plain, resourceVersion);
        } catch (Failure f) {
            return undecodable(keyText, e, f.reason, f.getMessage());
        }
        if (secrets == SecretPolicy.REDACT && r.group().isEmpty() && r.plural().equals("secrets")) {
            json = SecretRedaction.redact(json);
        }
        return new DecodeResult.Decoded(new KubeWatchEvent(
                type,
                r.group(),
                r.version(),
                r.kind(),
                r.plural(),
                key.namespace(),
                key.name(),
                resourceVersion,
                previous,
                e.getRevision(),
                e.getIndex(),
                e.getResync(),
                time,
                json));
    }

    /** The object's JSON with {@code metadata.resourceVersion} = {@code resourceVersion}. */
    private byte[] render(byte[] plain, long resourceVersion) throws Failure {
        StoredObject stored = StoredObject.of(plain, 0, plain.length);
        switch (stored.encoding()) {
            case PROTOBUF -> {
                Descriptor type = schema.type(stored.apiVersion(), stored.kind())
                        .orElseThrow(() -> new Failure(
                                DecodeResult.Reason.NO_SCHEMA,
                                "no schema for " + stored.apiVersion() + " " + stored.kind()));
                buffer.reset();
                try {
                    writer.writeObject(
                            buffer,
                            type,
                            stored.apiVersion(),
                            stored.kind(),
                            plain,
                            stored.rawOffset(),
                            stored.rawLength(),
                            resourceVersion);
                } catch (UndecodableObjectException ex) {
                    throw new Failure(DecodeResult.Reason.CORRUPT, ex.getMessage());
                }
                return Arrays.copyOf(buffer.array(), buffer.length());
            }
            case JSON -> {
                try {
                    return KubeWatchFrames.jsonStoredObject(plain, resourceVersion);
                } catch (UndecodableObjectException ex) {
                    throw new Failure(DecodeResult.Reason.CORRUPT, ex.getMessage());
                }
            }
            case CBOR -> throw new Failure(DecodeResult.Reason.CBOR, "stored as CBOR, which is not read");
            case ENCRYPTED ->
                throw new Failure(
                        DecodeResult.Reason.ENCRYPTED,
                        "encrypted at rest (" + stored.detail() + ") and no key given to open it");
            default -> throw new Failure(DecodeResult.Reason.CORRUPT, stored.detail());
        }
    }

    private static DecodeResult undecodable(String key, Event e, DecodeResult.Reason reason, String message) {
        return new DecodeResult.Undecodable(key, e.getRevision(), reason, message);
    }

    /** Why {@link #render} failed; never leaves this class. */
    private static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient DecodeResult.Reason reason;

        Failure(DecodeResult.Reason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }
    }
}

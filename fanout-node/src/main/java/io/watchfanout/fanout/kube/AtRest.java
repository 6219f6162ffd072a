package io.watchfanout.fanout.kube;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.security.EncryptionFile;
import io.watchfanout.fanout.security.StorageDecryption;
import io.watchfanout.schema.v1.KeyValue;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The values kube-apiserver encrypted at rest ({@code k8s:enc:<provider>:v1:<key>:}), opened
 * before anything reads them (lists, gets, watch frames, selectors, the authorizers' objects)
 * with the node's {@code --encryption-provider-config} ({@link StorageDecryption}: aescbc, aesgcm
 * with the etcd key as additional data, secretbox; identity values pass as they are). A value
 * that cannot be opened (a KMS provider, a key the file does not give the resource, a failed tag
 * or padding) is an {@link UndecodableObjectException} naming the key and the provider, answered
 * for that object as any undecodable one is (a 500 Status, an ERROR event) and counted in
 * {@link #FAILURES}; never garbage.
 *
 * <p>One configuration per process, as the watch encodings it serves are registered once per
 * process; without one, encrypted values stay undecodable. Thread-safe: the decryption is
 * swapped as a whole when the file is read again. A plain value costs one comparison of its
 * first bytes.
 */
final class AtRest {
    private static final Logger LOG = LoggerFactory.getLogger(AtRest.class);
    /** How often the file is looked at. */
    private static final long RELOAD_MILLIS = 1000;

    /** Encrypted values the node could not open. */
    static final LongAdder FAILURES = new LongAdder();

    private static volatile Keys keys;

    private record Keys(StorageDecryption decryption, KubeResources resources) {}

    private AtRest() {}

    /** Opens encrypted values with {@code decryption} from now on; the resources tell which resource a key holds. */
    static void use(StorageDecryption decryption, KubeResources resources) {
        keys = new Keys(decryption, resources);
    }

    /**
     * Opens encrypted values with the keys of {@code file} from now on, and reads it again about
     * once a second on a daemon thread ({@code watchfanout-kube-encryption-<node>}) when it changed;
     * a changed file that cannot be used is logged once and the previous keys stay.
     *
     * @return stops the reloading
     */
    static AutoCloseable use(EncryptionFile file, KubeResources resources, String nodeId) {
        use(file.decryption(), resources);
        ScheduledExecutorService reloader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watchfanout-kube-encryption-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        String[] lastError = {null};
        reloader.scheduleWithFixedDelay(
                () -> {
                    try {
                        if (file.reload()) {
                            use(file.decryption(), resources);
                            LOG.info("[node {}] --encryption-provider-config {} reloaded", nodeId, file.path());
                        }
                        lastError[0] = null;
                    } catch (IOException | RuntimeException e) {
                        String message = String.valueOf(e.getMessage());
                        if (!message.equals(lastError[0])) {
                            lastError[0] = message;
                            LOG.warn(
                                    "[node {}] cannot reload --encryption-provider-config, keeping the previous keys: {}",
                                    nodeId,
                                    message);
                        }
                    }
                },
                RELOAD_MILLIS,
                RELOAD_MILLIS,
                TimeUnit.MILLISECONDS);
        LOG.info(
                "[node {}] encrypted values are opened with the keys of --encryption-provider-config {}",
                nodeId,
                file.path());
        return reloader::shutdownNow;
    }

    private static final ByteString PREFIX = ByteString.copyFromUtf8("k8s:enc:");

    /** True when {@code value} starts with kube-apiserver's encryption prefix {@code k8s:enc:}. */
    static boolean isEncrypted(ByteString value) {
        return value.startsWith(PREFIX);
    }

    /**
     * The plain stored value of {@code kv}: its value itself unless encrypted at rest.
     *
     * @throws UndecodableObjectException when it is encrypted and cannot be opened
     */
    static byte[] plain(KeyValue kv) throws UndecodableObjectException {
        Keys k = keys;
        // Without keys nothing is opened (and the ciphers' classes are never loaded on the feed thread).
        if (k == null || !isEncrypted(kv.getValue())) {
            return kv.getValue().toByteArray();
        }
        return decrypt(k, kv);
    }

    /**
     * As {@link #plain}, viewing a plain value's bytes where the cache holds them instead of
     * copying them (lists and watch frames read thousands of values).
     *
     * @throws UndecodableObjectException as {@link #plain} does
     */
    static StoredBytes open(KeyValue kv) throws UndecodableObjectException {
        Keys k = keys;
        if (k == null || !isEncrypted(kv.getValue())) {
            return StoredBytes.of(kv.getValue());
        }
        return StoredBytes.of(decrypt(k, kv));
    }

    private static byte[] decrypt(Keys k, KeyValue kv) throws UndecodableObjectException {
        byte[] value = kv.getValue().toByteArray();
        byte[] key = kv.getKey().toByteArray();
        Optional<KubeResources.ObjectKey> parsed = k.resources().parse(key);
        String resource = parsed.map(o -> o.resource().group().isEmpty()
                        ? o.resource().plural()
                        : o.resource().plural() + "." + o.resource().group())
                .orElse("");
        try {
            return k.decryption().decrypt(resource, key, value);
        } catch (StorageDecryption.DecryptionException e) {
            FAILURES.increment();
            throw new UndecodableObjectException(e.getMessage());
        }
    }
}

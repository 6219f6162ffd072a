package io.watchfanout.kube.codec;

import com.google.protobuf.ByteString;
import io.watchfanout.kube.codec.atrest.StorageDecryption;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.schema.v1.KeyValue;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * The values kube-apiserver encrypted at rest ({@code k8s:enc:<provider>:v1:<key>:}), opened
 * before anything reads them (lists, gets, watch frames, selectors, the authorizers' objects)
 * with the keys of an {@code --encryption-provider-config} ({@link StorageDecryption}: aescbc, aesgcm
 * with the etcd key as additional data, secretbox; identity values pass as they are). A value
 * that cannot be opened (a KMS provider, a key the file does not give the resource, a failed tag
 * or padding) is an {@link UndecodableObjectException} naming the key and the provider, answered
 * for that object as any undecodable one is (a 500 Status, an ERROR event) and counted in
 * {@link #failures()}; never garbage.
 *
 * <p>One configuration per process, as the watch encodings it serves are registered once per
 * process; without one, encrypted values stay undecodable. Thread-safe: the decryption is
 * swapped as a whole when the keys are read again ({@link #use}). A plain value costs one
 * comparison of its first bytes.
 */
public final class AtRest {
    /** Encrypted values that could not be opened. */
    private static final LongAdder FAILURES = new LongAdder();

    private static volatile Keys keys;

    private record Keys(StorageDecryption decryption, KubeResources resources) {}

    private AtRest() {}

    /** Opens encrypted values with {@code decryption} from now on; the resources tell which resource a key holds. */
    public static void use(StorageDecryption decryption, KubeResources resources) {
        keys = new Keys(decryption, resources);
    }

    /** Encrypted values that could not be opened since the process started (a counter). */
    public static long failures() {
        return FAILURES.sum();
    }

    private static final ByteString PREFIX = ByteString.copyFromUtf8("k8s:enc:");

    /** True when {@code value} starts with kube-apiserver's encryption prefix {@code k8s:enc:}. */
    public static boolean isEncrypted(ByteString value) {
        return value.startsWith(PREFIX);
    }

    /**
     * The plain stored value of {@code kv}: its value itself unless encrypted at rest.
     *
     * @throws UndecodableObjectException when it is encrypted and cannot be opened
     */
    public static byte[] plain(KeyValue kv) throws UndecodableObjectException {
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
    public static StoredBytes open(KeyValue kv) throws UndecodableObjectException {
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

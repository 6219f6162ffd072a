package io.watchfanout.kube.codec.atrest;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import javax.crypto.AEADBadTagException;
import javax.crypto.BadPaddingException;
import javax.crypto.Cipher;
import javax.crypto.IllegalBlockSizeException;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.crypto.engines.XSalsa20Engine;
import org.bouncycastle.crypto.macs.Poly1305;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.crypto.params.ParametersWithIV;

/**
 * Decrypts values kube-apiserver encrypted at rest, as its storage transformers read them
 * (k8s.io/apiserver {@code storage/value/encrypt}): a value starting
 * {@code k8s:enc:<provider>:v1:<key name>:} is opened by that provider's key of that name, if the
 * configuration gives the resource that provider:
 * <ul>
 *   <li>{@code aescbc}: a 16-byte IV, then AES-CBC with PKCS#7 padding;
 *   <li>{@code aesgcm}: a 12-byte nonce, then AES-GCM with a 16-byte tag, the etcd key as
 *       additional authenticated data;
 *   <li>{@code secretbox}: a 24-byte nonce, then NaCl's secretbox (XSalsa20-Poly1305);
 *   <li>{@code kms}: refused, with the provider's name (the node has no KMS plugin);
 *   <li>a value without the prefix is plain, as the {@code identity} provider reads it.
 * </ul>
 * A failure is never garbage: the tag or padding does not verify, the key is unknown, the value is
 * cut short; {@link DecryptionException} says which, naming the key and the provider.
 *
 * <p>Thread-safe: immutable; ciphers are made per call.
 */
public final class StorageDecryption {
    private static final byte[] PREFIX = "k8s:enc:".getBytes(StandardCharsets.US_ASCII);

    private final EncryptionConfiguration config;

    /** Decryption by {@code config}'s providers. */
    public StorageDecryption(EncryptionConfiguration config) {
        this.config = config;
    }

    /** A value kube-apiserver stored encrypted that the node cannot open; the message says why. */
    public static final class DecryptionException extends Exception {
        private static final long serialVersionUID = 1L;

        DecryptionException(String message) {
            super(message, null, false, false);
        }
    }

    /** True when {@code value} starts with kube-apiserver's encryption prefix. */
    public static boolean isEncrypted(byte[] value) {
        return value.length >= PREFIX.length && Arrays.equals(value, 0, PREFIX.length, PREFIX, 0, PREFIX.length);
    }

    /**
     * The plain value of {@code value}, stored under {@code etcdKey} for {@code resource}
     * ({@code secrets}, {@code deployments.apps}): {@code value} itself when it is not encrypted.
     *
     * @throws DecryptionException when it is encrypted and cannot be opened
     */
    public byte[] decrypt(String resource, byte[] etcdKey, byte[] value) throws DecryptionException {
        if (!isEncrypted(value)) {
            return value;
        }
        String key = new String(etcdKey, StandardCharsets.UTF_8);
        // k8s:enc:<provider>:<version>:<key name>:<data>
        int[] colons = new int[5];
        int found = 0;
        for (int i = 0; i < value.length && found < 5 && i < 512; i++) {
            if (value[i] == ':') {
                colons[found++] = i;
            }
        }
        if (found < 5 && !(found == 4 && text(value, colons[1] + 1, colons[2]).equals("kms"))) {
            throw new DecryptionException(key + ": an encrypted value with a malformed prefix");
        }
        String provider = text(value, colons[1] + 1, colons[2]);
        String version = text(value, colons[2] + 1, colons[3]);
        if (provider.equals("kms")) {
            throw new DecryptionException(key + ": encrypted by the KMS provider (" + version + ", "
                    + (found == 5 ? text(value, colons[3] + 1, colons[4]) : "?")
                    + "); this node has no KMS plugin and cannot decrypt it");
        }
        String keyName = text(value, colons[3] + 1, colons[4]);
        byte[] data = Arrays.copyOfRange(value, colons[4] + 1, value.length);
        EncryptionConfiguration.Key k = find(resource, provider, keyName);
        if (k == null) {
            throw new DecryptionException(key + ": encrypted with " + provider + " key \"" + keyName
                    + "\", which --encryption-provider-config does not give " + resource);
        }
        try {
            return switch (provider) {
                case "aescbc" -> aesCbc(k.secret(), data);
                case "aesgcm" -> aesGcm(k.secret(), data, etcdKey);
                case "secretbox" -> secretbox(k.secret(), data);
                default -> throw new DecryptionException(key + ": unknown provider " + provider);
            };
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new DecryptionException(key + ": " + provider + " key \"" + keyName + "\" cannot decrypt it ("
                    + failedCheck(e) + "): a wrong key, or the value was altered");
        }
    }

    /** What failed, in the cipher's terms, without the JDK's wording. */
    private static String failedCheck(Exception e) {
        if (e instanceof AEADBadTagException) {
            return "the authentication tag does not match";
        }
        if (e instanceof BadPaddingException) {
            return "the padding does not check out";
        }
        if (e instanceof IllegalBlockSizeException) {
            return "the length is not a whole number of blocks";
        }
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    private EncryptionConfiguration.Key find(String resource, String provider, String keyName) {
        for (EncryptionConfiguration.Rule rule : config.rules()) {
            if (!matches(rule.resources(), resource)) {
                continue;
            }
            for (EncryptionConfiguration.Provider p : rule.providers()) {
                if (p.kind().equals(provider) && p.keys().containsKey(keyName)) {
                    return p.keys().get(keyName);
                }
            }
            // kube-apiserver uses the first rule that names the resource.
            return null;
        }
        return null;
    }

    private static boolean matches(List<String> patterns, String resource) {
        int dot = resource.indexOf('.');
        String group = dot < 0 ? "" : resource.substring(dot + 1);
        for (String pattern : patterns) {
            if (pattern.equals(resource)
                    || pattern.equals("*.*")
                    || (group.isEmpty() && pattern.equals("*."))
                    || (!group.isEmpty() && pattern.equals("*." + group))) {
                return true;
            }
        }
        return false;
    }

    private static byte[] aesCbc(byte[] key, byte[] data) throws GeneralSecurityException {
        if (data.length < 16 || (data.length - 16) % 16 != 0 || data.length == 16) {
            throw new GeneralSecurityException("the data is not whole AES blocks after the IV");
        }
        Cipher c = Cipher.getInstance("AES/CBC/PKCS5Padding");
        c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(data, 0, 16));
        return c.doFinal(data, 16, data.length - 16);
    }

    private static byte[] aesGcm(byte[] key, byte[] data, byte[] etcdKey) throws GeneralSecurityException {
        if (data.length < 12 + 16) {
            throw new GeneralSecurityException("shorter than a nonce and a tag");
        }
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, data, 0, 12));
        c.updateAAD(etcdKey);
        return c.doFinal(data, 12, data.length - 12);
    }

    /**
     * NaCl's secretbox_open: the XSalsa20 keystream's first 32 bytes are the Poly1305 key, the rest
     * is XORed with the message; the 16-byte tag precedes the ciphertext and is checked first.
     */
    private static byte[] secretbox(byte[] key, byte[] data) throws GeneralSecurityException {
        if (data.length < 24 + 16) {
            throw new GeneralSecurityException("shorter than a nonce and a tag");
        }
        int boxed = data.length - 24 - 16;
        XSalsa20Engine xsalsa = new XSalsa20Engine();
        xsalsa.init(false, new ParametersWithIV(new KeyParameter(key), data, 0, 24));
        byte[] stream = new byte[32 + boxed];
        xsalsa.processBytes(stream, 0, stream.length, stream, 0);
        Poly1305 mac = new Poly1305();
        mac.init(new KeyParameter(stream, 0, 32));
        mac.update(data, 24 + 16, boxed);
        byte[] tag = new byte[16];
        mac.doFinal(tag, 0);
        if (!MessageDigest.isEqual(tag, Arrays.copyOfRange(data, 24, 24 + 16))) {
            throw new GeneralSecurityException("the Poly1305 tag does not verify");
        }
        byte[] plain = new byte[boxed];
        for (int i = 0; i < boxed; i++) {
            plain[i] = (byte) (data[24 + 16 + i] ^ stream[32 + i]);
        }
        return plain;
    }

    private static String text(byte[] value, int from, int to) {
        return new String(value, from, Math.max(0, to - from), StandardCharsets.US_ASCII);
    }
}

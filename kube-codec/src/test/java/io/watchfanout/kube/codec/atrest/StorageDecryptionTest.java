package io.watchfanout.kube.codec.atrest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.bouncycastle.crypto.engines.XSalsa20Engine;
import org.bouncycastle.crypto.macs.Poly1305;
import org.bouncycastle.crypto.params.KeyParameter;
import org.bouncycastle.crypto.params.ParametersWithIV;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Values encrypted as kube-apiserver encrypts them at rest (made here with the JDK's ciphers and
 * BouncyCastle's XSalsa20 and Poly1305), read back through an EncryptionConfiguration file.
 */
class StorageDecryptionTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] KEY1 = bytes(32);
    private static final byte[] KEY2 = bytes(16);
    private static final byte[] BOX = bytes(32);
    private static final byte[] ETCD_KEY = "/registry/secrets/default/db".getBytes(StandardCharsets.UTF_8);
    private static final byte[] PLAIN = "k8s\u0000 a stored Secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void everyProviderDecryptsWhatKubeApiserverWrote() throws Exception {
        StorageDecryption decryption = new StorageDecryption(EncryptionConfiguration.read(config()));
        assertThat(decryption.decrypt("secrets", ETCD_KEY, aesCbc("key1", KEY1, PLAIN)))
                .isEqualTo(PLAIN);
        assertThat(decryption.decrypt("secrets", ETCD_KEY, aesGcm("key2", KEY2, PLAIN, ETCD_KEY)))
                .isEqualTo(PLAIN);
        assertThat(decryption.decrypt("secrets", ETCD_KEY, secretbox("box", BOX, PLAIN)))
                .isEqualTo(PLAIN);
        assertThat(decryption.decrypt("secrets", ETCD_KEY, secretbox("box", BOX, new byte[0])))
                .isEmpty();
        assertThat(decryption.decrypt("secrets", ETCD_KEY, PLAIN)).isSameAs(PLAIN);
        assertThat(decryption.decrypt("deployments.apps", ETCD_KEY, aesCbc("old", KEY2, PLAIN)))
                .isEqualTo(PLAIN);
    }

    @Test
    void alteredValuesWrongKeysAndKmsAreErrorsNamingKeyAndProvider() throws Exception {
        StorageDecryption decryption = new StorageDecryption(EncryptionConfiguration.read(config()));
        byte[] gcm = aesGcm("key2", KEY2, PLAIN, ETCD_KEY);
        gcm[gcm.length - 3] ^= 1;
        assertThatThrownBy(() -> decryption.decrypt("secrets", ETCD_KEY, gcm))
                .isInstanceOf(StorageDecryption.DecryptionException.class)
                .hasMessageContaining("/registry/secrets/default/db")
                .hasMessageContaining("aesgcm key \"key2\"");
        byte[] movedKey =
                aesGcm("key2", KEY2, PLAIN, "/registry/secrets/default/other".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> decryption.decrypt("secrets", ETCD_KEY, movedKey))
                .isInstanceOf(StorageDecryption.DecryptionException.class);
        byte[] box = secretbox("box", BOX, PLAIN);
        box[box.length - 1] ^= 1;
        assertThatThrownBy(() -> decryption.decrypt("secrets", ETCD_KEY, box))
                .hasMessageContaining("secretbox key \"box\"");
        assertThatThrownBy(() -> decryption.decrypt("secrets", ETCD_KEY, aesCbc("key1", bytes(32), PLAIN)))
                .isInstanceOf(StorageDecryption.DecryptionException.class);
        assertThatThrownBy(() -> decryption.decrypt("secrets", ETCD_KEY, aesCbc("nokey", KEY1, PLAIN)))
                .hasMessageContaining("aescbc key \"nokey\"")
                .hasMessageContaining("does not give secrets");
        assertThatThrownBy(() -> decryption.decrypt(
                        "secrets", ETCD_KEY, "k8s:enc:kms:v2:vault:\u0001\u0002".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("KMS")
                .hasMessageContaining("vault");
        assertThatThrownBy(() -> decryption.decrypt("configmaps", ETCD_KEY, aesCbc("key1", KEY1, PLAIN)))
                .hasMessageContaining("does not give configmaps");
        byte[] cut = Arrays.copyOf(aesCbc("key1", KEY1, PLAIN), 30);
        assertThatThrownBy(() -> decryption.decrypt("secrets", ETCD_KEY, cut))
                .isInstanceOf(StorageDecryption.DecryptionException.class);
    }

    @Test
    void badFilesAreRefusedNamingWhatIsWrong() throws IOException {
        assertThatThrownBy(() -> EncryptionConfiguration.read(write("kind: Other\n")))
                .hasMessageContaining("kind: Other");
        assertThatThrownBy(() -> EncryptionConfiguration.read(write("""
                        kind: EncryptionConfiguration
                        apiVersion: apiserver.config.k8s.io/v1
                        resources:
                          - resources: [secrets]
                            providers:
                              - aescbc:
                                  keys:
                                    - name: short
                                      secret: AAAA
                        """)))
                .hasMessageContaining("short")
                .hasMessageContaining("16, 24 or 32");
        assertThatThrownBy(() -> EncryptionConfiguration.read(write("""
                        kind: EncryptionConfiguration
                        resources:
                          - resources: [secrets]
                            providers:
                              - rot13: {}
                        """)))
                .hasMessageContaining("unknown provider rot13");
    }

    @Test
    void aRotatedFileParsesToADifferentConfiguration() throws Exception {
        EncryptionConfiguration before = EncryptionConfiguration.read(config());
        assertThat(EncryptionConfiguration.read(config())).isEqualTo(before);
        Path rotated = write(Files.readString(config()).replace("name: key1", "name: key3"));
        assertThat(EncryptionConfiguration.read(rotated)).isNotEqualTo(before);
    }

    private Path config() throws IOException {
        return write("""
                apiVersion: apiserver.config.k8s.io/v1
                kind: EncryptionConfiguration
                resources:
                  - resources:
                      - secrets
                    providers:
                      - aescbc:
                          keys:
                            - name: key1
                              secret: %s
                      - aesgcm:
                          keys:
                            - name: key2
                              secret: %s
                      - secretbox:
                          keys:
                            - name: box
                              secret: %s
                      - identity: {}
                  - resources: ["*.apps"]
                    providers:
                      - aescbc:
                          keys:
                            - name: old
                              secret: %s
                """.formatted(b64(KEY1), b64(KEY2), b64(BOX), b64(KEY2)));
    }

    private Path write(String text) throws IOException {
        Path file = Files.createTempFile(dir, "encryption", ".yaml");
        Files.writeString(file, text);
        return file;
    }

    private static byte[] aesCbc(String name, byte[] key, byte[] plain) throws Exception {
        byte[] iv = bytes(16);
        Cipher c = Cipher.getInstance("AES/CBC/PKCS5Padding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(iv));
        return concat(("k8s:enc:aescbc:v1:" + name + ":").getBytes(StandardCharsets.US_ASCII), iv, c.doFinal(plain));
    }

    private static byte[] aesGcm(String name, byte[] key, byte[] plain, byte[] aad) throws Exception {
        byte[] nonce = bytes(12);
        Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
        c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(128, nonce));
        c.updateAAD(aad);
        return concat(("k8s:enc:aesgcm:v1:" + name + ":").getBytes(StandardCharsets.US_ASCII), nonce, c.doFinal(plain));
    }

    /** NaCl's secretbox (Go's golang.org/x/crypto/nacl/secretbox.Seal): nonce, then tag and ciphertext. */
    private static byte[] secretbox(String name, byte[] key, byte[] plain) {
        byte[] nonce = bytes(24);
        XSalsa20Engine xsalsa = new XSalsa20Engine();
        xsalsa.init(true, new ParametersWithIV(new KeyParameter(key), nonce));
        byte[] stream = new byte[32 + plain.length];
        xsalsa.processBytes(stream, 0, stream.length, stream, 0);
        byte[] cipher = new byte[plain.length];
        for (int i = 0; i < plain.length; i++) {
            cipher[i] = (byte) (plain[i] ^ stream[32 + i]);
        }
        Poly1305 mac = new Poly1305();
        mac.init(new KeyParameter(stream, 0, 32));
        mac.update(cipher, 0, cipher.length);
        byte[] tag = new byte[16];
        mac.doFinal(tag, 0);
        return concat(("k8s:enc:secretbox:v1:" + name + ":").getBytes(StandardCharsets.US_ASCII), nonce, tag, cipher);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    private static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }
}

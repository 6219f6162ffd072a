package io.watchfanout.fanout.security;

import io.watchfanout.kube.codec.atrest.EncryptionConfiguration;
import io.watchfanout.kube.codec.atrest.StorageDecryption;
import java.io.IOException;
import java.nio.file.Path;

/**
 * kube-apiserver's {@code --encryption-provider-config} file as the node uses it: the
 * {@link StorageDecryption} of its providers and keys, read again when the file changes (key
 * rotation: a new key is added first, then made the first provider, then the old one removed; the
 * node opens values of every key the file names). A changed file that cannot be read or parsed
 * keeps the previous keys.
 *
 * <p>Thread-safe: {@link #decryption()} from any thread, {@link #reload()} from one at a time.
 */
public final class EncryptionFile {
    private final ReloadingFile<EncryptionConfiguration> file;
    private volatile StorageDecryption decryption;

    /**
     * Reads the file.
     *
     * @throws IOException naming the flag and the file when it cannot be read or is invalid
     */
    public EncryptionFile(Path path) throws IOException {
        this.file = new ReloadingFile<>(path, EncryptionConfiguration::read);
        this.decryption = new StorageDecryption(file.get());
    }

    /** The decryption of the keys last read. */
    public StorageDecryption decryption() {
        return decryption;
    }

    /**
     * Reads the file again if it changed.
     *
     * @return true when the providers or keys changed
     * @throws IOException when the changed file cannot be read or parsed; the previous keys stay
     */
    public boolean reload() throws IOException {
        if (!file.reload()) {
            return false;
        }
        decryption = new StorageDecryption(file.get());
        return true;
    }

    /** The file. */
    public Path path() {
        return file.file();
    }
}

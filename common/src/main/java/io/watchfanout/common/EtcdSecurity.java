package io.watchfanout.common;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * How a runnable proves itself to etcd, etcdctl's way: a CA to verify etcd's certificate
 * ({@code --etcd-cacert}), a client certificate and its PKCS#8 key ({@code --etcd-cert},
 * {@code --etcd-key}), and a user whose password is read from a file ({@code --etcd-user},
 * {@code --etcd-password-file}). Each part is optional; the pairs are both or neither.
 *
 * <p>{@link #toString()} never shows the password. Immutable and thread-safe.
 */
public final class EtcdSecurity {
    /** Nothing: plaintext etcd (or https with the JVM's trust store) without authentication. */
    public static final EtcdSecurity NONE = new EtcdSecurity(null, null, null, null, null);

    private final Path caCert;
    private final Path cert;
    private final Path key;
    private final String user;
    private final String password;

    private EtcdSecurity(Path caCert, Path cert, Path key, String user, String password) {
        this.caCert = caCert;
        this.cert = cert;
        this.key = key;
        this.user = user;
        this.password = password;
    }

    /**
     * @param caCert PEM file of the CAs that sign etcd's certificate, or null for the JVM's trust store
     * @param cert PEM client certificate (chain), or null; with {@code key}
     * @param key its PKCS#8 PEM private key, or null; with {@code cert}
     * @param user etcd user, or null; with {@code password}
     * @param password the user's password, or null
     * @throws IllegalArgumentException when only one of a pair is given, or the user is blank
     */
    public static EtcdSecurity of(Path caCert, Path cert, Path key, String user, String password) {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("a client certificate needs its key: give both or neither");
        }
        if ((user == null) != (password == null)) {
            throw new IllegalArgumentException("an etcd user needs a password: give both or neither");
        }
        if (user != null && user.isBlank()) {
            throw new IllegalArgumentException("the etcd user is blank");
        }
        return new EtcdSecurity(caCert, cert, key, user, password);
    }

    /**
     * The password of {@code --etcd-password-file}: the file's text, UTF-8, without its trailing
     * line break ({@code \n} or {@code \r\n}, as {@code echo} or an editor leaves it).
     *
     * @throws IllegalArgumentException when the file is missing, unreadable or empty; the message
     *     names the file, never its content
     */
    public static String readPassword(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(file + ": no such file");
        } catch (IOException e) {
            throw new IllegalArgumentException(
                    file + ": cannot be read (" + e.getClass().getSimpleName() + ")");
        }
        if (text.endsWith("\n")) {
            text = text.substring(0, text.length() - (text.endsWith("\r\n") ? 2 : 1));
        }
        if (text.isEmpty()) {
            throw new IllegalArgumentException(file + ": empty (expected: the password)");
        }
        return text;
    }

    /** The CA file, or null for the JVM's trust store. */
    public Path caCert() {
        return caCert;
    }

    /** The client certificate file, or null. */
    public Path cert() {
        return cert;
    }

    /** The client key file (PKCS#8 PEM), or null. */
    public Path key() {
        return key;
    }

    /** The etcd user, or null for none. */
    public String user() {
        return user;
    }

    /** The user's password, or null; never log it. */
    public String password() {
        return password;
    }

    /** Whether a CA or a client certificate is given (the endpoints must then be https). */
    public boolean tls() {
        return caCert != null || cert != null;
    }

    /** Whether a user is given (calls carry a token of etcd's Auth.Authenticate). */
    public boolean authenticates() {
        return user != null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EtcdSecurity s
                && Objects.equals(caCert, s.caCert)
                && Objects.equals(cert, s.cert)
                && Objects.equals(key, s.key)
                && Objects.equals(user, s.user)
                && Objects.equals(password, s.password);
    }

    @Override
    public int hashCode() {
        return Objects.hash(caCert, cert, key, user);
    }

    /** The files and the user; the password as {@code ***}. */
    @Override
    public String toString() {
        return "EtcdSecurity{cacert=" + caCert + ", cert=" + cert + ", key=" + key + ", user=" + user
                + (password != null ? ", password=***" : "") + "}";
    }
}

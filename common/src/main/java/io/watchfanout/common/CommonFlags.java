package io.watchfanout.common;

import io.watchfanout.common.tls.TlsFiles;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The flags that several runnables take, with the same name, form, unit and check everywhere;
 * each runnable adds its own help text ({@link Flag.Builder#help}).
 *
 * <p>Stateless and thread-safe.
 */
public final class CommonFlags {
    private CommonFlags() {}

    /** {@code --kafka-bootstrap HOSTS}: {@code host:port[,host:port]}, checked when parsed ({@link KafkaBootstrapConverter}). */
    public static Flag.Builder<String> kafkaBootstrap() {
        return Flag.of("--kafka-bootstrap", "HOSTS", String.class, new KafkaBootstrapConverter())
                .unit("`host:port`, comma-separated");
    }

    /** {@code --topic-prefix NAME}: the topics are {@code <NAME>.events} and {@code <NAME>.state}. */
    public static Flag.Builder<String> topicPrefix() {
        return Flag.text("--topic-prefix", "NAME")
                .unit("Kafka topic name prefix")
                .check(Check.notBlank("not empty"));
    }

    /** {@code --etcd-endpoints URLS}: etcd client URLs as etcdctl takes them ({@link EtcdEndpointConverter}). */
    public static Flag.Builder<List<String>> etcdEndpoints() {
        return Flag.list("--etcd-endpoints", "URLS", new EtcdEndpointConverter())
                .unit("URLs or `host:port`, comma-separated");
    }

    /**
     * {@code --tls-cert-file FILE}: the PEM certificate chain of the runnable's listeners, the
     * server's certificate first; reloaded when it changes ({@link io.watchfanout.common.tls.ServerTls}).
     */
    public static Flag.Builder<Path> tlsCertFile() {
        return Flag.path(TlsFiles.CERT_FLAG, "FILE")
                .defaultText("none; plaintext")
                .unit("path, PEM");
    }

    /** {@code --tls-key-file FILE}: the certificate's private key, unencrypted PKCS#8 PEM. */
    public static Flag.Builder<Path> tlsKeyFile() {
        return Flag.path(TlsFiles.KEY_FLAG, "FILE")
                .defaultText("none; plaintext")
                .unit("path, PKCS#8 PEM");
    }

    /** {@code --client-ca-file FILE}: PEM bundle of the CAs whose client certificates are accepted (mutual TLS). */
    public static Flag.Builder<Path> clientCaFile() {
        return Flag.path(TlsFiles.CLIENT_CA_FLAG, "FILE")
                .defaultText("none; no client certificate asked for")
                .unit("path, PEM");
    }

    /**
     * The TLS files of the three flags {@link #tlsCertFile()}, {@link #tlsKeyFile()} and
     * {@link #clientCaFile()} as parsed.
     *
     * @return null when none is given (plaintext)
     * @throws CommandLine.ParameterException (a usage error, exit status 2) for a certificate
     *     without a key, a key without a certificate, or a client CA without both
     */
    public static TlsFiles tlsFiles(
            CommandSpec spec, FlagTable.Values values, Flag<Path> cert, Flag<Path> key, Flag<Path> clientCa) {
        try {
            return TlsFiles.of(values.get(cert), values.get(key), values.get(clientCa));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}

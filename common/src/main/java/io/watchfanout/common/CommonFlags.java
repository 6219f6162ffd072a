package io.watchfanout.common;

import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.TypeConversionException;

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
     * The five etcd security flags, as etcdctl names them with an {@code etcd-} prefix:
     * {@code --etcd-cacert}, {@code --etcd-cert}, {@code --etcd-key}, {@code --etcd-user},
     * {@code --etcd-password-file}; {@link #etcdSecurity} reads them.
     *
     * @param userHelp the help of {@code --etcd-user}: which of the runnable's calls carry the user's token
     */
    public static EtcdFlags etcdSecurityFlags(String userHelp) {
        return new EtcdFlags(
                Flag.path("--etcd-cacert", "FILE")
                        .defaultText("the JVM's trust store")
                        .unit("PEM file")
                        .help(
                                "CA certificates that sign etcd's server certificate (https endpoints), as etcdctl --cacert."),
                Flag.path("--etcd-cert", "FILE")
                        .defaultText("none")
                        .unit("PEM file")
                        .help("Client certificate for etcd (etcd's --client-cert-auth), as etcdctl --cert; with "
                                + "--etcd-key."),
                Flag.path("--etcd-key", "FILE")
                        .defaultText("none")
                        .unit("PKCS#8 PEM file")
                        .help("Private key of --etcd-cert, unencrypted PKCS#8 (BEGIN PRIVATE KEY), as etcdctl --key."),
                Flag.text("--etcd-user", "NAME")
                        .defaultText("none")
                        .unit("etcd user")
                        .check(Check.notBlank("not empty"))
                        .help(userHelp),
                Flag.path("--etcd-password-file", "FILE")
                        .defaultText("none")
                        .unit("file")
                        .help("File holding the password of --etcd-user (a trailing line break is dropped); read at "
                                + "startup, never logged."));
    }

    /**
     * {@code --kafka-config FILE}: Kafka client settings, a properties file, read and checked when
     * parsed ({@link KafkaClientSettings#read}); absent means {@code null}, i.e. none.
     */
    public static Flag.Builder<KafkaClientSettings> kafkaConfig() {
        return Flag.of("--kafka-config", "FILE", KafkaClientSettings.class, CommonFlags::kafkaSettings)
                .defaultText("none; plaintext Kafka")
                .unit("Java properties file");
    }

    private static KafkaClientSettings kafkaSettings(String file) {
        try {
            return KafkaClientSettings.read(Path.of(file));
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }

    /**
     * The etcd security of the parsed flags: reads the password file and checks the pairs.
     *
     * @param spec the parsed command line, for the error
     * @param v the checked values of a table holding the five flags
     * @param flags the runnable's {@link #etcdSecurityFlags}
     * @param endpoints the parsed {@code --etcd-endpoints}: certificates need {@code https} ones
     * @throws CommandLine.ParameterException naming the flags of a half-given pair, a certificate
     *     for {@code http} endpoints, or the password file that cannot be read (never its
     *     content); picocli exits with status 2
     */
    public static EtcdSecurity etcdSecurity(
            CommandSpec spec, FlagTable.Values v, EtcdFlags flags, List<String> endpoints) {
        Path cert = v.get(flags.cert());
        Path key = v.get(flags.key());
        String user = v.get(flags.user());
        Path passwordFile = v.get(flags.passwordFile());
        if ((cert == null) != (key == null)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    flags.cert() + " and " + flags.key() + " go together (expected: both or neither)");
        }
        if ((user == null) != (passwordFile == null)) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    flags.user() + " and " + flags.passwordFile() + " go together (expected: both or neither)");
        }
        boolean certificates = v.get(flags.cacert()) != null || cert != null;
        if (certificates && endpoints.stream().anyMatch(e -> !e.startsWith("https://"))) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    flags.cacert() + "/" + flags.cert() + " are for TLS (expected: https:// --etcd-endpoints, got "
                            + String.join(",", endpoints) + ")");
        }
        String password;
        try {
            password = passwordFile == null ? null : EtcdSecurity.readPassword(passwordFile);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), flags.passwordFile() + ": " + e.getMessage());
        }
        return EtcdSecurity.of(v.get(flags.cacert()), cert, key, user, password);
    }

    /**
     * The five etcd security flags of one runnable's table ({@link #etcdSecurityFlags}).
     *
     * @param cacert {@code --etcd-cacert}
     * @param cert {@code --etcd-cert}
     * @param key {@code --etcd-key}
     * @param user {@code --etcd-user}
     * @param passwordFile {@code --etcd-password-file}
     */
    public record EtcdFlags(
            Flag<Path> cacert, Flag<Path> cert, Flag<Path> key, Flag<String> user, Flag<Path> passwordFile) {}
}

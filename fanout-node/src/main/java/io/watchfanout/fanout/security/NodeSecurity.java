package io.watchfanout.fanout.security;

import io.grpc.Channel;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Assembles a node's {@link AccessControl} from its {@link SecurityConfig}: the authenticators
 * of each listener ({@link CertificateAuthenticator}, {@link TokenFile}, {@link JwtAuthenticator},
 * {@link EtcdTokens}), the policy ({@link PolicyFile}, {@link EtcdRoles}), the limits. Stateless.
 */
public final class NodeSecurity {
    private NodeSecurity() {}

    /**
     * Reads the authenticator of kube-apiserver's ServiceAccount tokens ({@code --service-account-key-file}).
     * It lives with the Kubernetes API, which holds the objects bound tokens are checked against,
     * so the node passes it in rather than this package knowing the Kubernetes API.
     */
    @FunctionalInterface
    public interface ServiceAccountAuthenticator {
        /**
         * The authenticator the flags describe.
         *
         * @throws IOException when a key file cannot be read or parsed
         */
        Authenticator read(SecurityConfig.Kubernetes flags) throws IOException;
    }

    /**
     * As {@link #create(SecurityConfig, String, Channel, ServiceAccountAuthenticator)}, for a node
     * without the Kubernetes API: {@code --authentication=serviceaccount} is refused.
     */
    public static AccessControl create(SecurityConfig config, String nodeId, Channel etcd) {
        return create(config, nodeId, etcd, flags -> {
            throw new IOException("ServiceAccount tokens need the node's Kubernetes API");
        });
    }

    /**
     * The access control the flags describe, not started. With {@code --authz=etcd} etcd's roles
     * are read here (blocking, at most a few seconds when etcd does not answer).
     *
     * @param etcd the node's channel to etcd (for {@code --authz=etcd}), or null without one
     * @param serviceAccounts reads the authenticator of ServiceAccount tokens (the Kubernetes API's)
     * @throws SecuritySetupException when a token, key or policy file cannot be read or parsed,
     *     or etcd refuses to show its roles (the one-line message names the flag and the file)
     */
    public static AccessControl create(
            SecurityConfig config, String nodeId, Channel etcd, ServiceAccountAuthenticator serviceAccounts) {
        if (config.isOpen()) {
            return AccessControl.open(nodeId, config.limits());
        }
        Map<String, Authenticator> methods = new LinkedHashMap<>();
        for (String m : config.configuredMethods()) {
            methods.put(m, authenticator(m, config, serviceAccounts));
        }
        AccessControl.Builder b = AccessControl.builder(nodeId)
                .anonymous(config.anonymous())
                .policy(policy(config, etcd))
                .limits(config.limits());
        if (methods.get("etcd") instanceof EtcdTokens tokens) {
            b.etcdTokens(tokens);
        }
        for (Listener l : Listener.values()) {
            List<Authenticator> list = new ArrayList<>();
            for (String m : config.methods(l)) {
                list.add(methods.get(m));
            }
            b.authenticators(l, list);
        }
        return b.build();
    }

    private static Authenticator authenticator(
            String method, SecurityConfig config, ServiceAccountAuthenticator serviceAccounts) {
        return switch (method) {
            case "cert" -> new CertificateAuthenticator();
            case "token" -> read("--token-auth-file", () -> new TokenFile(config.tokenAuthFile()));
            case "jwt" ->
                read(
                        "--jwt-jwks-file",
                        () -> new JwtAuthenticator(
                                config.jwt().jwksFile(),
                                config.jwt().issuer(),
                                config.jwt().audience(),
                                config.jwt().usernameClaim(),
                                config.jwt().groupsClaim(),
                                Clock.systemUTC()));
            case "serviceaccount" ->
                read("--service-account-key-file", () -> serviceAccounts.read(config.kubernetes()));
            case "etcd" -> new EtcdTokens();
            default -> throw new IllegalArgumentException("unknown authentication method " + method);
        };
    }

    private static AccessPolicy policy(SecurityConfig config, Channel etcd) {
        String authz = config.authz();
        if (authz == null) {
            // With --authorization-mode alone, the Kubernetes API has its authorizers and the
            // etcd-key APIs (/v1, the etcd API) are given to nobody.
            return config.kubernetes().authorizationModes().isEmpty() ? AccessPolicy.ALLOW_ALL : AccessPolicy.DENY_ALL;
        }
        if (authz.startsWith("file:")) {
            return read("--authz", () -> new PolicyFile(Path.of(authz.substring("file:".length()))));
        }
        if (authz.equals("etcd")) {
            if (etcd == null) {
                throw new SecuritySetupException(
                        "--authz=etcd: the node has no channel to etcd (give --etcd-endpoints and --etcd-api-port)",
                        null);
            }
            return read(
                    "--authz",
                    () -> EtcdRoles.load(new EtcdAuthReader(etcd), config.authzEtcdRefresh(), System::nanoTime));
        }
        throw new IllegalArgumentException("--authz=" + authz + " is not available");
    }

    private interface Reader<T> {
        T read() throws IOException;
    }

    private static <T> T read(String flag, Reader<T> reader) {
        try {
            return reader.read();
        } catch (NoSuchFileException e) {
            throw new SecuritySetupException(flag + ": " + e.getFile() + ": no such file", e);
        } catch (AccessDeniedException e) {
            throw new SecuritySetupException(flag + ": " + e.getFile() + ": permission denied", e);
        } catch (IOException e) {
            String message = String.valueOf(e.getMessage());
            throw new SecuritySetupException(message.startsWith(flag) ? message : flag + ": " + message, e);
        }
    }
}

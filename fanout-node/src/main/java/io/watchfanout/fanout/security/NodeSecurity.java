package io.watchfanout.fanout.security;

import io.grpc.Channel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Assembles a node's {@link AccessControl} from its {@link SecurityConfig}: the authenticators
 * of each listener, the policy, the limits. Stateless.
 */
public final class NodeSecurity {
    private NodeSecurity() {}

    /**
     * The access control the flags describe, not started.
     *
     * @param etcd the node's channel to etcd (for {@code --etcd-user-auth} and {@code --authz=etcd}),
     *     or null without {@code --etcd-endpoints}
     * @throws UncheckedIOException when a token, key or policy file cannot be read or parsed (the
     *     message names the file)
     */
    public static AccessControl create(SecurityConfig config, String nodeId, Channel etcd) {
        if (config.isOpen()) {
            return AccessControl.open(nodeId, config.limits());
        }
        try {
            Map<String, Authenticator> methods = new LinkedHashMap<>();
            for (String m : config.configuredMethods()) {
                methods.put(m, authenticator(m, config, etcd));
            }
            AccessControl.Builder b = AccessControl.builder(nodeId)
                    .anonymous(config.anonymous())
                    .policy(policy(config, etcd))
                    .limits(config.limits());
            for (Listener l : Listener.values()) {
                List<Authenticator> list = new ArrayList<>();
                for (String m : config.methods(l)) {
                    list.add(methods.get(m));
                }
                b.authenticators(l, list);
            }
            return b.build();
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    private static Authenticator authenticator(String method, SecurityConfig config, Channel etcd) throws IOException {
        throw new IllegalArgumentException("authentication method " + method + " is not available");
    }

    private static AccessPolicy policy(SecurityConfig config, Channel etcd) throws IOException {
        String authz = config.authz();
        if (authz == null) {
            return AccessPolicy.ALLOW_ALL;
        }
        if (authz.startsWith("file:")) {
            return new PolicyFile(Path.of(authz.substring("file:".length())));
        }
        throw new IllegalArgumentException("--authz=" + authz + " is not available");
    }
}

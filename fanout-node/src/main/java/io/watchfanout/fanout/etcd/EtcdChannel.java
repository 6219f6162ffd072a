package io.watchfanout.fanout.etcd;

import io.grpc.EquivalentAddressGroup;
import io.grpc.ManagedChannel;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.watchfanout.common.EtcdSecurity;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;

/**
 * The node's one channel to etcd (HTTP/2 connections pooled by grpc, shared by every forwarded
 * call and every consistent read): its addresses are the {@code --etcd-endpoints}, tried in
 * order and failed over when one goes down (grpc's {@code pick_first}), as clientv3 does with
 * its endpoint list. {@code https} endpoints use TLS: etcd's certificate is verified with
 * {@code --etcd-cacert} (else the JVM's trust store), and {@code --etcd-cert}/{@code --etcd-key} are
 * the client certificate (etcd's {@code --client-cert-auth}). The channel carries no user: the
 * node's own calls add {@link EtcdCredentials}, forwarded calls the client's own metadata.
 *
 * <p>Thread-safety: the returned channel is grpc's, thread-safe.
 */
final class EtcdChannel {
    private static final String SCHEME = "watchfanout-etcd";

    private EtcdChannel() {}

    /**
     * @param endpoints URLs such as {@code http://127.0.0.1:2379}, at least one
     * @param security the CA and client certificate of https endpoints
     * @throws IllegalArgumentException if {@code endpoints} is empty or mixes http and https, if
     *     certificates are given for http endpoints, or if a certificate or key cannot be read
     */
    @SuppressWarnings("deprecation") // nameResolverFactory: the stable way to hand a channel a fixed list
    static ManagedChannel open(List<String> endpoints, EtcdSecurity security) {
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("no etcd endpoints");
        }
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        boolean tls = false;
        boolean plain = false;
        for (String e : endpoints) {
            URI uri = URI.create(e);
            tls |= "https".equals(uri.getScheme());
            plain |= !"https".equals(uri.getScheme());
            groups.add(new EquivalentAddressGroup(InetSocketAddress.createUnresolved(uri.getHost(), uri.getPort())));
        }
        if (tls && plain) {
            throw new IllegalArgumentException("--etcd-endpoints mixes http and https: " + endpoints);
        }
        if (security.tls() && !tls) {
            throw new IllegalArgumentException(
                    "--etcd-cacert/--etcd-cert are given, but --etcd-endpoints are http: " + endpoints);
        }
        NettyChannelBuilder b = NettyChannelBuilder.forTarget(SCHEME + ":///etcd")
                .nameResolverFactory(
                        new FixedAddresses(groups, URI.create(endpoints.get(0)).getAuthority()))
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .maxInboundMessageSize(Integer.MAX_VALUE);
        if (tls && security.tls()) {
            b.sslContext(sslContext(security));
        } else if (tls) {
            b.useTransportSecurity();
        } else {
            b.usePlaintext();
        }
        return b.build();
    }

    private static SslContext sslContext(EtcdSecurity security) {
        try {
            SslContextBuilder ssl = GrpcSslContexts.forClient();
            if (security.caCert() != null) {
                ssl.trustManager(security.caCert().toFile());
            }
            if (security.cert() != null) {
                ssl.keyManager(security.cert().toFile(), security.key().toFile());
            }
            return ssl.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "cannot use the etcd TLS files of " + security + ": " + e.getMessage(), e);
        }
    }

    /** A name resolver that always answers the same addresses. */
    private static final class FixedAddresses extends NameResolverProvider {
        private final List<EquivalentAddressGroup> groups;
        private final String authority;

        FixedAddresses(List<EquivalentAddressGroup> groups, String authority) {
            this.groups = groups;
            this.authority = authority;
        }

        @Override
        public NameResolver newNameResolver(URI targetUri, NameResolver.Args args) {
            return new NameResolver() {
                @Override
                public String getServiceAuthority() {
                    return authority;
                }

                private Listener2 listener;

                @Override
                public void start(Listener2 listener) {
                    this.listener = listener;
                    resolve();
                }

                @Override
                public void refresh() {
                    resolve();
                }

                /** Looks the endpoints' host names up again (on start, and when grpc asks after a failure). */
                private void resolve() {
                    List<EquivalentAddressGroup> resolved = new ArrayList<>();
                    for (EquivalentAddressGroup g : groups) {
                        InetSocketAddress a =
                                (InetSocketAddress) g.getAddresses().get(0);
                        InetSocketAddress r = new InetSocketAddress(a.getHostString(), a.getPort());
                        if (!r.isUnresolved()) {
                            resolved.add(new EquivalentAddressGroup(r));
                        }
                    }
                    if (resolved.isEmpty()) {
                        listener.onResult(ResolutionResult.newBuilder()
                                .setAddressesOrError(
                                        io.grpc.StatusOr.fromStatus(io.grpc.Status.UNAVAILABLE.withDescription(
                                                "cannot resolve the --etcd-endpoints " + groups)))
                                .build());
                    } else {
                        listener.onResult(ResolutionResult.newBuilder()
                                .setAddressesOrError(io.grpc.StatusOr.fromValue(resolved))
                                .build());
                    }
                }

                @Override
                public void shutdown() {}
            };
        }

        @Override
        protected boolean isAvailable() {
            return true;
        }

        @Override
        protected int priority() {
            return 5;
        }

        @Override
        public String getDefaultScheme() {
            return SCHEME;
        }
    }
}

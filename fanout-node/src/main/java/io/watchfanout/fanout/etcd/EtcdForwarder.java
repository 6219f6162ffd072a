package io.watchfanout.fanout.etcd;

import com.google.protobuf.InvalidProtocolBufferException;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.etcd.jetcd.api.AuthenticateResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.watchfanout.fanout.security.EtcdTokens;
import io.watchfanout.fanout.security.Identity;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The etcd API's fallback: every method the node does not serve itself ({@code Put},
 * {@code DeleteRange}, {@code Txn}, {@code Compact}, the {@code Lease}, {@code Cluster},
 * {@code Maintenance} and {@code Auth} services, v3election, v3lock, and any method a newer
 * client knows) is forwarded to etcd unchanged: the request and response bytes, the metadata
 * (such as an auth {@code token}), flow control and cancellation, in both directions of a
 * stream (a lease keep-alive). Like etcd's gRPC proxy for the calls it does not cache.
 *
 * <p>With {@code --etcd-user-auth}, the user name of each {@code Auth/Authenticate} request and
 * the token of its response are handed to {@link EtcdTokens#issued}, so that the node accepts the
 * token; the bytes are forwarded unchanged all the same.
 *
 * <p>Each request message is first checked against the caller's permissions
 * ({@link ForwardedAccess}); a refused one closes the call with {@code PERMISSION_DENIED} and
 * never reaches etcd. The node adds nothing of its own to a client's call: etcd sees the
 * client's metadata, its token among them.
 *
 * <p>Without an etcd channel every such call answers {@code UNAVAILABLE} with a message naming
 * {@code --etcd-endpoints}. Thread-safety: calls run on grpc's threads; stateless.
 */
final class EtcdForwarder extends HandlerRegistry {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = RawMessages.MARSHALLER;

    private final Channel etcd;
    private final Runnable onForward;
    private final EtcdTokens tokens;
    private final ForwardedAccess access;

    /**
     * @param etcd the channel to etcd, or null when the node has no {@code --etcd-endpoints}
     * @param onForward called once per forwarded call (a metric)
     * @param access what each request needs
     * @param tokens told of the tokens etcd issues ({@code --etcd-user-auth}), or null
     */
    EtcdForwarder(Channel etcd, Runnable onForward, ForwardedAccess access, EtcdTokens tokens) {
        this.etcd = etcd;
        this.onForward = onForward;
        this.access = access;
        this.tokens = tokens;
    }

    @Override
    public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
        MethodDescriptor<byte[], byte[]> method = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setFullMethodName(methodName)
                .setType(MethodDescriptor.MethodType.UNKNOWN)
                .setRequestMarshaller(BYTES)
                .setResponseMarshaller(BYTES)
                .build();
        return ServerMethodDefinition.create(method, this::startCall);
    }

    private ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> serverCall, Metadata headers) {
        if (etcd == null) {
            serverCall.close(
                    Status.UNAVAILABLE.withDescription(
                            serverCall.getMethodDescriptor().getFullMethodName()
                                    + " is forwarded to etcd, and this node has no --etcd-endpoints"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        onForward.run();
        String methodName = serverCall.getMethodDescriptor().getFullMethodName();
        Identity caller = EtcdAuth.identity();
        // Set when a request is refused: the call to etcd is cancelled, and its close is not the client's answer.
        AtomicBoolean refused = new AtomicBoolean();
        // The user name of a forwarded Authenticate, for the token its response carries.
        AtomicReference<String> authenticating =
                tokens != null && methodName.equals(EtcdAuth.AUTHENTICATE) ? new AtomicReference<>() : null;
        // The caller's deadline travels with the forwarded call (grpc-timeout is rewritten, not copied).
        ClientCall<byte[], byte[]> clientCall = etcd.newCall(
                serverCall.getMethodDescriptor(),
                CallOptions.DEFAULT.withDeadline(Context.current().getDeadline()));
        clientCall.start(
                new ClientCall.Listener<>() {
                    @Override
                    public void onHeaders(Metadata h) {
                        serverCall.sendHeaders(h);
                    }

                    @Override
                    public void onMessage(byte[] message) {
                        if (authenticating != null) {
                            remember(authenticating.get(), message);
                        }
                        serverCall.sendMessage(message);
                        if (serverCall.isReady()) {
                            clientCall.request(1);
                        }
                    }

                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        if (!refused.get()) {
                            serverCall.close(status, trailers);
                        }
                    }

                    @Override
                    public void onReady() {
                        // The client's side to etcd can take more: ask the server side for the next request.
                        serverCall.request(1);
                    }
                },
                stripped(headers));
        serverCall.request(1);
        clientCall.request(1);
        return new ServerCall.Listener<>() {
            @Override
            public void onMessage(byte[] message) {
                if (refused.get()) {
                    return;
                }
                Status denied = access.check(methodName, caller, message);
                if (denied != null) {
                    refused.set(true);
                    clientCall.cancel("refused by the node: " + denied.getDescription(), null);
                    serverCall.close(denied, new Metadata());
                    return;
                }
                if (authenticating != null) {
                    authenticating.set(userName(message));
                }
                clientCall.sendMessage(message);
                if (clientCall.isReady()) {
                    serverCall.request(1);
                }
            }

            @Override
            public void onHalfClose() {
                if (!refused.get()) {
                    clientCall.halfClose();
                }
            }

            @Override
            public void onCancel() {
                clientCall.cancel("the client cancelled the call", null);
            }

            @Override
            public void onReady() {
                // The client of the node can take more: ask etcd for the next response.
                clientCall.request(1);
            }
        };
    }

    private static String userName(byte[] request) {
        try {
            return AuthenticateRequest.parseFrom(request).getName();
        } catch (InvalidProtocolBufferException e) {
            return null; // etcd answers the broken request itself
        }
    }

    private void remember(String user, byte[] response) {
        try {
            tokens.issued(AuthenticateResponse.parseFrom(response).getToken(), user);
        } catch (InvalidProtocolBufferException e) {
            // Not a token the node can accept; the client gets etcd's bytes all the same.
        }
    }

    /** The caller's metadata minus the transport's own headers, which the channel sets. */
    static Metadata stripped(Metadata in) {
        Metadata out = new Metadata();
        for (String key : in.keys()) {
            if (key.startsWith(":")
                    || key.equals("content-type")
                    || key.equals("te")
                    || key.equals("user-agent")
                    || key.equals("grpc-accept-encoding")
                    || key.equals("grpc-encoding")
                    || key.equals("grpc-timeout")) {
                continue;
            }
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
                Metadata.Key<byte[]> k = Metadata.Key.of(key, Metadata.BINARY_BYTE_MARSHALLER);
                for (byte[] v : in.getAll(k)) {
                    out.put(k, v);
                }
            } else {
                Metadata.Key<String> k = Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER);
                for (String v : in.getAll(k)) {
                    out.put(k, v);
                }
            }
        }
        return out;
    }
}

package io.watchfanout.fanout.etcd;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.ClusterGrpc;
import io.etcd.jetcd.api.ElectionGrpc;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.MaintenanceGrpc;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.lock.LockGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Identity;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * etcd's JSON gateway (its grpc-gateway, {@code /v3/...} on the client port) on the node's HTTP
 * port: a JSON request body becomes the gRPC request of the path's method, called on the node's
 * own etcd API (so that Watch and KV.Range come from the cache and the rest is forwarded), and
 * the answer goes back in the gateway's JSON: proto field names, 64-bit integers as strings,
 * bytes as base64, default values left out; a stream ({@code /v3/watch},
 * {@code /v3/lease/keepalive}, {@code /v3/election/observe}, {@code /v3/maintenance/snapshot}) as
 * one {@code {"result":{...}}} line per response. Errors as etcd's gateway gives them:
 * {@code {"error":..,"message":..,"code":<grpc code>}} with the HTTP status grpc-gateway maps the
 * code to. Unknown request fields are ignored, as etcd's gateway ignores them.
 *
 * <p>Access (README.md, "Security"): the transport authenticates the HTTP request
 * ({@link #authenticate}) and hands the identity to {@link #call}, which passes it to the
 * in-process server under a one-time ticket that only that server reads ({@link EtcdAuth});
 * the services then check it as for a gRPC client, and their refusals come back as the
 * gateway's errors (HTTP 401, 403, 429).
 *
 * <p>The transport is the caller's: it hands in the body and a {@link Sink}. Thread-safety:
 * stateless after construction; calls run on grpc's threads.
 */
public final class JsonGateway {
    /** Where a gateway call's output goes; called from grpc's threads, one call at a time per request. */
    public interface Sink {
        /** The HTTP status and first bytes of the answer (called once, before any {@link #line}). */
        void start(int httpStatus);

        /** One JSON object of the answer, without a trailing newline. */
        void line(byte[] json);

        /** The answer is complete. */
        void end();
    }

    /** A call in progress; cancel it when the client goes away. */
    public interface Call {
        /** Cancels the gRPC call. */
        void cancel();
    }

    private static final JsonFormat.Printer PRINTER =
            JsonFormat.printer().preservingProtoFieldNames().omittingInsignificantWhitespace();
    private static final JsonFormat.Parser PARSER = JsonFormat.parser().ignoringUnknownFields();
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    private final Channel self;
    private final EtcdAuth auth;
    private final Map<String, MethodDescriptor<?, ?>> routes = new HashMap<>();

    /**
     * @param self a channel to the node's own in-process etcd API
     * @param auth the API's authentication, which trusts the identities this gateway hands over
     */
    JsonGateway(Channel self, EtcdAuth auth) {
        this.self = self;
        this.auth = auth;
        route("/v3/kv/range", KVGrpc.getRangeMethod());
        route("/v3/kv/put", KVGrpc.getPutMethod());
        route("/v3/kv/deleterange", KVGrpc.getDeleteRangeMethod());
        route("/v3/kv/txn", KVGrpc.getTxnMethod());
        route("/v3/kv/compaction", KVGrpc.getCompactMethod());
        route("/v3/watch", WatchGrpc.getWatchMethod());
        route("/v3/lease/grant", LeaseGrpc.getLeaseGrantMethod());
        route("/v3/lease/revoke", LeaseGrpc.getLeaseRevokeMethod());
        route("/v3/kv/lease/revoke", LeaseGrpc.getLeaseRevokeMethod());
        route("/v3/lease/keepalive", LeaseGrpc.getLeaseKeepAliveMethod());
        route("/v3/lease/timetolive", LeaseGrpc.getLeaseTimeToLiveMethod());
        route("/v3/kv/lease/timetolive", LeaseGrpc.getLeaseTimeToLiveMethod());
        route("/v3/cluster/member/add", ClusterGrpc.getMemberAddMethod());
        route("/v3/cluster/member/remove", ClusterGrpc.getMemberRemoveMethod());
        route("/v3/cluster/member/update", ClusterGrpc.getMemberUpdateMethod());
        route("/v3/cluster/member/list", ClusterGrpc.getMemberListMethod());
        route("/v3/maintenance/alarm", MaintenanceGrpc.getAlarmMethod());
        route("/v3/maintenance/status", MaintenanceGrpc.getStatusMethod());
        route("/v3/maintenance/defragment", MaintenanceGrpc.getDefragmentMethod());
        route("/v3/maintenance/hash", MaintenanceGrpc.getHashKVMethod());
        route("/v3/maintenance/snapshot", MaintenanceGrpc.getSnapshotMethod());
        route("/v3/maintenance/transfer-leadership", MaintenanceGrpc.getMoveLeaderMethod());
        route("/v3/auth/enable", AuthGrpc.getAuthEnableMethod());
        route("/v3/auth/disable", AuthGrpc.getAuthDisableMethod());
        route("/v3/auth/authenticate", AuthGrpc.getAuthenticateMethod());
        route("/v3/auth/user/add", AuthGrpc.getUserAddMethod());
        route("/v3/auth/user/get", AuthGrpc.getUserGetMethod());
        route("/v3/auth/user/list", AuthGrpc.getUserListMethod());
        route("/v3/auth/user/delete", AuthGrpc.getUserDeleteMethod());
        route("/v3/auth/user/changepw", AuthGrpc.getUserChangePasswordMethod());
        route("/v3/auth/user/grant", AuthGrpc.getUserGrantRoleMethod());
        route("/v3/auth/user/revoke", AuthGrpc.getUserRevokeRoleMethod());
        route("/v3/auth/role/add", AuthGrpc.getRoleAddMethod());
        route("/v3/auth/role/get", AuthGrpc.getRoleGetMethod());
        route("/v3/auth/role/list", AuthGrpc.getRoleListMethod());
        route("/v3/auth/role/delete", AuthGrpc.getRoleDeleteMethod());
        route("/v3/auth/role/grant", AuthGrpc.getRoleGrantPermissionMethod());
        route("/v3/auth/role/revoke", AuthGrpc.getRoleRevokePermissionMethod());
        route("/v3/election/campaign", ElectionGrpc.getCampaignMethod());
        route("/v3/election/proclaim", ElectionGrpc.getProclaimMethod());
        route("/v3/election/leader", ElectionGrpc.getLeaderMethod());
        route("/v3/election/observe", ElectionGrpc.getObserveMethod());
        route("/v3/election/resign", ElectionGrpc.getResignMethod());
        route("/v3/lock/lock", LockGrpc.getLockMethod());
        route("/v3/lock/unlock", LockGrpc.getUnlockMethod());
    }

    private void route(String path, MethodDescriptor<?, ?> method) {
        routes.put(path, method);
    }

    /** True when {@code path} is a gateway path (else the caller answers 404, as etcd's gateway). */
    public boolean handles(String path) {
        return routes.containsKey(path);
    }

    /**
     * True when {@code path}'s method streams its answer (a server or bidirectional stream such as
     * {@code /v3/watch}): the answer may go on, or wait, for as long as the client stays.
     *
     * @throws IllegalArgumentException if {@code path} is not a gateway path
     */
    public boolean streams(String path) {
        return method(path).getType() != MethodDescriptor.MethodType.UNARY;
    }

    /**
     * Who sent a request to {@code path}, on the HTTP listener's methods; a raw
     * {@code Authorization: <token>} is an etcd token, as etcd's gateway reads it.
     *
     * @param commonName the verified client certificate's CN, or null
     * @param authorization the {@code Authorization} header, or null
     * @return null for {@code /v3/auth/authenticate}, which needs no credentials
     * @throws AuthenticationException when the credentials are missing or not accepted (HTTP 401)
     * @throws IllegalArgumentException if {@code path} is not a gateway path
     */
    public Identity authenticate(String path, String commonName, String authorization) throws AuthenticationException {
        return auth.authenticateGateway(method(path).getFullMethodName(), commonName, authorization);
    }

    private MethodDescriptor<?, ?> method(String path) {
        MethodDescriptor<?, ?> method = routes.get(path);
        if (method == null) {
            throw new IllegalArgumentException("not a gateway path: " + path);
        }
        return method;
    }

    /**
     * Calls the method of {@code path} with the request(s) in {@code body} (one JSON object; for a
     * client stream, any number of them one after the other) and writes the answer to {@code sink}.
     *
     * @param identity who asks, from {@link #authenticate}; null only for {@code /v3/auth/authenticate}
     * @param authorization the request's {@code Authorization} header (an etcd token), or null; it
     *     goes on to etcd with forwarded calls, as the client's own
     * @throws IllegalArgumentException if {@code path} is not a gateway path
     */
    public Call call(String path, byte[] body, Identity identity, String authorization, Sink sink) {
        return start(method(path), body, identity, authorization, sink);
    }

    @SuppressWarnings("unchecked")
    private <Q extends Message, R extends Message> Call start(
            MethodDescriptor<?, ?> m, byte[] body, Identity identity, String authorization, Sink sink) {
        MethodDescriptor<Q, R> method = (MethodDescriptor<Q, R>) m;
        Q prototype = ((MethodDescriptor.PrototypeMarshaller<Q>) method.getRequestMarshaller()).getMessagePrototype();
        List<Q> requests;
        try {
            requests = parse(prototype, body);
        } catch (IOException e) {
            // InvalidArgument (HTTP 400) for every method, streams included: the client's body is
            // at fault, and the node's HTTP port answers bad input with a 4xx.
            error(sink, Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
            return () -> {};
        }
        Metadata md = new Metadata();
        if (authorization != null) {
            md.put(AUTHORIZATION, authorization);
        }
        String ticket = identity == null ? null : auth.ticket(identity);
        if (ticket != null) {
            md.put(EtcdAuth.TICKET, ticket);
        }
        Channel ch = ClientInterceptors.intercept(self, MetadataUtils.newAttachHeadersInterceptor(md));
        ClientCall<Q, R> call = ch.newCall(method, CallOptions.DEFAULT);
        boolean streaming = method.getType() != MethodDescriptor.MethodType.UNARY;
        StreamObserver<R> answers = new StreamObserver<>() {
            private boolean started;

            @Override
            public void onNext(R response) {
                if (!started) {
                    started = true;
                    sink.start(200);
                }
                sink.line(
                        streaming
                                ? ("{\"result\":" + print(response) + "}").getBytes(StandardCharsets.UTF_8)
                                : print(response).getBytes(StandardCharsets.UTF_8));
            }

            @Override
            public void onError(Throwable t) {
                forget(ticket);
                Status s = Status.fromThrowable(t);
                if (started) {
                    // Mid-stream, as grpc-gateway: an error object in the stream.
                    sink.line(("{\"error\":" + errorJson(s) + "}").getBytes(StandardCharsets.UTF_8));
                    sink.end();
                } else {
                    error(sink, s);
                }
            }

            @Override
            public void onCompleted() {
                forget(ticket);
                if (!started) {
                    started = true;
                    sink.start(200);
                }
                sink.end();
            }
        };
        if (method.getType() == MethodDescriptor.MethodType.UNARY
                || method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
            if (requests.size() != 1) {
                error(
                        sink,
                        Status.INVALID_ARGUMENT.withDescription("expected one request object, got " + requests.size()));
                forget(ticket);
                return () -> {};
            }
            if (method.getType() == MethodDescriptor.MethodType.UNARY) {
                ClientCalls.asyncUnaryCall(call, requests.get(0), answers);
            } else {
                ClientCalls.asyncServerStreamingCall(call, requests.get(0), answers);
            }
        } else {
            StreamObserver<Q> out = ClientCalls.asyncBidiStreamingCall(call, answers);
            requests.forEach(out::onNext);
            // The stream stays open (etcd's watch keeps sending after the client's requests end).
        }
        return () -> call.cancel("the HTTP client went away", null);
    }

    private void forget(String ticket) {
        if (ticket != null) {
            auth.forget(ticket);
        }
    }

    private static <Q extends Message> List<Q> parse(Q prototype, byte[] body) throws IOException {
        List<Q> out = new ArrayList<>();
        String text = new String(body, StandardCharsets.UTF_8).strip();
        if (text.isEmpty()) {
            // An empty body is an empty request, as etcd's gateway reads it.
            @SuppressWarnings("unchecked")
            Q empty = (Q) prototype.getDefaultInstanceForType();
            out.add(empty);
            return out;
        }
        try (Reader r = new InputStreamReader(new ByteArrayInputStream(body), StandardCharsets.UTF_8)) {
            com.google.gson.stream.JsonReader reader = new com.google.gson.stream.JsonReader(r);
            reader.setStrictness(com.google.gson.Strictness.LENIENT);
            while (reader.peek() != com.google.gson.stream.JsonToken.END_DOCUMENT) {
                com.google.gson.JsonElement element = com.google.gson.JsonParser.parseReader(reader);
                Message.Builder b = prototype.newBuilderForType();
                PARSER.merge(element.toString(), b);
                @SuppressWarnings("unchecked")
                Q q = (Q) b.build();
                out.add(q);
            }
        } catch (RuntimeException | IOException e) {
            throw new IOException("invalid JSON request body: " + reason(e), e);
        }
        return out;
    }

    /**
     * What a parser found wrong, without the Java class names its exceptions put before it (Gson
     * wraps its reader's {@code java.io.EOFException: End of input ...}): the innermost message.
     */
    private static String reason(Throwable e) {
        String message = null;
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                message = t.getMessage();
            }
        }
        if (message == null) {
            return "unreadable";
        }
        return CLASS_NAME_PREFIX.matcher(message).replaceAll("").strip();
    }

    /** A Java class name followed by a colon, as a wrapped exception's message begins. */
    private static final Pattern CLASS_NAME_PREFIX =
            Pattern.compile("(?:[a-z_$][\\w$]*\\.)+[A-Z][\\w$]*(?:Exception|Error): ");

    private static String print(Message m) {
        try {
            return PRINTER.print(m);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("a response does not print as JSON", e);
        }
    }

    private static void error(Sink sink, Status s) {
        sink.start(httpStatus(s.getCode()));
        sink.line(errorJson(s).getBytes(StandardCharsets.UTF_8));
        sink.end();
    }

    private static String errorJson(Status s) {
        return errorJson(
                s.getCode().value(), s.getDescription() == null ? s.getCode().name() : s.getDescription());
    }

    /** The gateway's error object: {@code {"error":message,"message":message,"code":grpcCode}}. */
    public static String errorJson(int grpcCode, String message) {
        String quoted = new com.google.gson.JsonPrimitive(message).toString();
        return "{\"error\":" + quoted + ",\"message\":" + quoted + ",\"code\":" + grpcCode + "}";
    }

    /** grpc-gateway's mapping of a gRPC code to an HTTP status. */
    static int httpStatus(Status.Code code) {
        return switch (code) {
            case OK -> 200;
            case CANCELLED -> 408;
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE -> 400;
            case DEADLINE_EXCEEDED -> 504;
            case NOT_FOUND -> 404;
            case ALREADY_EXISTS, ABORTED -> 409;
            case PERMISSION_DENIED -> 403;
            case UNAUTHENTICATED -> 401;
            case RESOURCE_EXHAUSTED -> 429;
            case UNIMPLEMENTED -> 501;
            case UNAVAILABLE -> 503;
            default -> 500;
        };
    }
}

package io.watchfanout.fanout.etcd;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.InputStream;

/**
 * The services the node serves itself, made to answer a request they cannot read as etcd does:
 * a message that is not the method's protobuf ends the call with {@code INTERNAL} and grpc-go's
 * words ({@code grpc: error unmarshalling request: ...} for a unary method, {@code grpc: failed to
 * unmarshal the received message ...} for a stream), and a unary call half-closed without a request
 * with {@code UNKNOWN "EOF"}. grpc-java instead lets the parse failure escape to its executor, which
 * logs it as SEVERE with a stack trace and answers {@code UNKNOWN "Application error processing
 * RPC"}; and it answers a missing unary request with {@code INTERNAL}.
 *
 * <p>How: each method's request marshaller hands a request it cannot parse on as an {@link
 * Unreadable} value instead of throwing, and the method's handler closes the call when one
 * arrives. The service's own handler then sees the call as cancelled by the client (what it
 * already cleans up after); what it still sends is dropped.
 *
 * <p>Stateless; the wrapped calls are thread-safe as grpc's calls are, their sends and the close
 * serialized by the call.
 */
final class UnreadableRequests {
    private UnreadableRequests() {}

    /** A request that did not parse, and why. */
    private record Unreadable(String reason) {}

    /**
     * {@code service} with every method guarded.
     *
     * @param service a service whose request marshallers throw on bad input (protobuf's do)
     * @return the same service (name, methods, handlers), answering unreadable requests as etcd
     */
    static ServerServiceDefinition guard(ServerServiceDefinition service) {
        ServerServiceDefinition.Builder b =
                ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            b.addMethod(guard(m));
        }
        return b.build();
    }

    /**
     * etcd's answer to a request message it cannot parse (grpc-go's codec error).
     *
     * @param unary whether the method takes one request (else a stream of them)
     * @param reason what the parser said
     */
    static Status unreadable(boolean unary, String reason) {
        return Status.INTERNAL.withDescription(
                unary
                        ? "grpc: error unmarshalling request: " + reason
                        : "grpc: failed to unmarshal the received message " + reason);
    }

    private static <Q, R> ServerMethodDefinition<Object, R> guard(ServerMethodDefinition<Q, R> m) {
        MethodDescriptor<Q, R> method = m.getMethodDescriptor();
        MethodDescriptor<Object, R> lenient = method.toBuilder(
                        new LenientMarshaller<>(method.getRequestMarshaller()), method.getResponseMarshaller())
                .build();
        boolean unary = method.getType().clientSendsOneMessage();
        ServerCallHandler<Q, R> handler = m.getServerCallHandler();
        return ServerMethodDefinition.create(lenient, (call, headers) -> {
            GuardedCall<Q, R> guarded = new GuardedCall<>(call);
            return new Listener<>(handler.startCall(guarded, headers), guarded, unary);
        });
    }

    /** Parses with the method's marshaller; a failure becomes an {@link Unreadable} request. */
    private static final class LenientMarshaller<Q> implements MethodDescriptor.Marshaller<Object> {
        private final MethodDescriptor.Marshaller<Q> requests;

        LenientMarshaller(MethodDescriptor.Marshaller<Q> requests) {
            this.requests = requests;
        }

        @Override
        @SuppressWarnings("unchecked")
        public InputStream stream(Object value) {
            return requests.stream((Q) value);
        }

        @Override
        public Object parse(InputStream stream) {
            try {
                return requests.parse(stream);
            } catch (RuntimeException e) {
                // protobuf's marshaller wraps InvalidProtocolBufferException in an INTERNAL status; its
                // cause says what was wrong with the bytes.
                Throwable why = e.getCause() != null ? e.getCause() : e;
                return new Unreadable(String.valueOf(why.getMessage()));
            }
        }
    }

    /** The call as the service sees it: after the guard closed it, it is cancelled and takes nothing more. */
    private static final class GuardedCall<Q, R> extends ForwardingServerCall<Q, R> {
        private final ServerCall<Object, R> call;
        /** Written under this object's monitor (with the sends it orders); read without it. */
        private volatile boolean closed;

        GuardedCall(ServerCall<Object, R> call) {
            this.call = call;
        }

        @Override
        @SuppressWarnings("unchecked")
        protected ServerCall<Q, R> delegate() {
            // Only the request type differs, and requests never pass through the call.
            return (ServerCall<Q, R>) (ServerCall<?, R>) call;
        }

        /** Closes the call with {@code status} unless it is closed; true when this closed it. */
        synchronized boolean closeWith(Status status) {
            if (closed) {
                return false;
            }
            closed = true;
            call.close(status, new Metadata());
            return true;
        }

        boolean isClosed() {
            return closed;
        }

        @Override
        public synchronized void sendHeaders(Metadata headers) {
            if (!closed) {
                super.sendHeaders(headers);
            }
        }

        @Override
        public synchronized void sendMessage(R message) {
            if (!closed) {
                super.sendMessage(message);
            }
        }

        @Override
        public synchronized void close(Status status, Metadata trailers) {
            if (!closed) {
                closed = true;
                super.close(status, trailers);
            }
        }

        @Override
        public synchronized void request(int numMessages) {
            if (!closed) {
                super.request(numMessages);
            }
        }

        @Override
        public boolean isReady() {
            return !isClosed() && super.isReady();
        }

        @Override
        public boolean isCancelled() {
            return isClosed() || super.isCancelled();
        }
    }

    /** The service's listener, behind the check of each request and of a unary call's half-close. */
    private static final class Listener<Q, R> extends ServerCall.Listener<Object> {
        private final ServerCall.Listener<Q> delegate;
        private final GuardedCall<Q, R> call;
        private final boolean unary;
        /** Set once the guard answered the call: nothing more reaches the service. Listener methods run serially. */
        private boolean ended;
        /** The guard closed the call (not the service): the service hears of it as a cancel. */
        private boolean closedByGuard;

        private boolean received;

        Listener(ServerCall.Listener<Q> delegate, GuardedCall<Q, R> call, boolean unary) {
            this.delegate = delegate;
            this.call = call;
            this.unary = unary;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void onMessage(Object message) {
            if (ended) {
                return;
            }
            if (message instanceof Unreadable u) {
                ended = true;
                closedByGuard = call.closeWith(unreadable(unary, u.reason()));
                return;
            }
            received = true;
            delegate.onMessage((Q) message);
        }

        @Override
        public void onHalfClose() {
            if (ended) {
                return;
            }
            if (unary && !received) {
                // grpc-go reads the request and gets io.EOF; etcd's answer carries Go's error text.
                ended = true;
                closedByGuard = call.closeWith(Status.UNKNOWN.withDescription("EOF"));
                return;
            }
            delegate.onHalfClose();
        }

        @Override
        public void onCancel() {
            delegate.onCancel();
        }

        @Override
        public void onComplete() {
            if (closedByGuard) {
                // The service did not end the call: to it, the client went away.
                delegate.onCancel();
            } else {
                delegate.onComplete();
            }
        }

        @Override
        public void onReady() {
            if (!ended) {
                delegate.onReady();
            }
        }
    }
}

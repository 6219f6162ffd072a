package io.watchfanout.fanout.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.watchfanout.fanout.etcd.RawMessages;
import io.watchfanout.testkit.Curl;
import io.watchfanout.testkit.EtcdExtension;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.KafkaBroker;
import io.watchfanout.testkit.KafkaExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input on a node's etcd API gets the status etcd gives for the same bytes, and no stack trace
 * in the node's log: a request that is not the method's protobuf (served from the cache, a stream,
 * forwarded), a unary call half-closed without a request, an unknown method or service, a message
 * over the size limit, and HTTP/2 frames that end inside a message or claim a compression. The
 * same bytes go to etcd and to the node, through grpc-java with a marshaller of raw bytes, and
 * through curl for what no gRPC client sends.
 */
@ExtendWith({EtcdExtension.class, KafkaExtension.class})
class EtcdApiBadInputTest {
    /** A field tag whose varint never ends: no protobuf message parses it. */
    private static final byte[] GARBAGE = {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff};

    private static final MethodDescriptor.Marshaller<byte[]> RAW = RawMessages.MARSHALLER;

    private final EtcdServer etcd;
    private final KafkaBroker kafka;

    EtcdApiBadInputTest(EtcdServer etcd, KafkaBroker kafka) {
        this.etcd = etcd;
        this.kafka = kafka;
    }

    /** Sends {@code messages} as raw bytes on a call of {@code method}, half-closes if asked, and returns how it closed. */
    private static Status call(Channel ch, String method, MethodType type, List<byte[]> messages, boolean halfClose)
            throws Exception {
        MethodDescriptor<byte[], byte[]> m = MethodDescriptor.<byte[], byte[]>newBuilder()
                .setFullMethodName(method)
                .setType(type)
                .setRequestMarshaller(RAW)
                .setResponseMarshaller(RAW)
                .build();
        ClientCall<byte[], byte[]> c = ch.newCall(m, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS));
        CompletableFuture<Status> closed = new CompletableFuture<>();
        c.start(
                new ClientCall.Listener<>() {
                    @Override
                    public void onClose(Status status, Metadata trailers) {
                        closed.complete(status);
                    }
                },
                new Metadata());
        c.request(16);
        for (byte[] message : messages) {
            c.sendMessage(message);
        }
        if (halfClose) {
            c.halfClose();
        }
        return closed.get(60, TimeUnit.SECONDS);
    }

    private static Status unary(Channel ch, String method, byte[]... messages) throws Exception {
        return call(ch, method, MethodType.UNARY, List.of(messages), true);
    }

    /** {@code grpc-status} and {@code grpc-message} of a POST of {@code body} (gRPC framing included) to {@code path}. */
    private static String curl(Path dir, int port, String path, byte[] body) throws IOException {
        Path file = Files.createTempFile(dir, "body", ".bin");
        Files.write(file, body);
        String out = Curl.run(
                        "-o",
                        "/dev/null",
                        "-D",
                        "-",
                        "--http2-prior-knowledge",
                        "-X",
                        "POST",
                        "-H",
                        "content-type: application/grpc",
                        "-H",
                        "te: trailers",
                        "--data-binary",
                        "@" + file,
                        "http://127.0.0.1:" + port + path)
                .out();
        return out.lines()
                .filter(l -> l.startsWith("grpc-status") || l.startsWith("grpc-message"))
                .map(String::strip)
                .reduce("", (a, b) -> a + b + "; ");
    }

    @Test
    void badInputGetsEtcdsStatusAndNoStackTrace(TestInfo info, @TempDir Path dir) throws Exception {
        try (EtcdApiStack stack = EtcdApiStack.start(info, etcd, kafka)) {
            Stack.Node node = stack.node("bad-input");
            Channel toNode = stack.channel(node);
            Channel toEtcd = stack.etcdChannel();

            // Served from the cache: a unary method and the Watch stream.
            Status range = unary(toNode, "etcdserverpb.KV/Range", GARBAGE);
            assertThat(range.getCode())
                    .isEqualTo(unary(toEtcd, "etcdserverpb.KV/Range", GARBAGE).getCode());
            assertThat(range.getCode()).isEqualTo(Status.Code.INTERNAL);
            assertThat(range.getDescription()).startsWith("grpc: error unmarshalling request: ");
            Status watch = call(toNode, "etcdserverpb.Watch/Watch", MethodType.BIDI_STREAMING, List.of(GARBAGE), false);
            assertThat(watch.getCode())
                    .isEqualTo(
                            call(toEtcd, "etcdserverpb.Watch/Watch", MethodType.BIDI_STREAMING, List.of(GARBAGE), false)
                                    .getCode())
                    .isEqualTo(Status.Code.INTERNAL);
            assertThat(watch.getDescription()).startsWith("grpc: failed to unmarshal the received message");
            // Forwarded: etcd's own answer.
            assertThat(unary(toNode, "etcdserverpb.KV/Put", GARBAGE).toString())
                    .isEqualTo(unary(toEtcd, "etcdserverpb.KV/Put", GARBAGE).toString());

            // Half-closed without a request: grpc-go's io.EOF.
            for (String method : List.of("etcdserverpb.KV/Range", "etcdserverpb.KV/Put")) {
                Status onNode = unary(toNode, method);
                assertThat(onNode.getCode())
                        .as(method)
                        .isEqualTo(unary(toEtcd, method).getCode());
                assertThat(onNode.getDescription())
                        .as(method)
                        .isEqualTo(unary(toEtcd, method).getDescription());
            }

            // Unknown methods and services.
            for (String method : List.of("etcdserverpb.KV/Nope", "foo.Bar/Baz", "etcdserverpb.Watch/Nope")) {
                assertThat(unary(toNode, method, GARBAGE).getCode())
                        .as(method)
                        .isEqualTo(unary(toEtcd, method, GARBAGE).getCode())
                        .isEqualTo(Status.Code.UNIMPLEMENTED);
            }

            // Larger than either takes (etcd: --max-request-bytes 10 MiB plus grpc's overhead; the node 16 MiB).
            byte[] huge = new byte[17 << 20];
            assertThat(unary(toNode, "etcdserverpb.KV/Range", huge).getCode())
                    .isEqualTo(unary(toEtcd, "etcdserverpb.KV/Range", huge).getCode())
                    .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);

            // Frames no gRPC client sends: a compressed message without a grpc-encoding, and a stream that
            // ends inside a message (grpc-java's transport answers INTERNAL where grpc-go answers UNKNOWN;
            // README.md, "etcd's v3 API").
            int nodePort = stack.apiPort(node);
            byte[] compressed = {1, 0, 0, 0, 2, 0x0a, 0};
            assertThat(curl(dir, nodePort, "/etcdserverpb.KV/Range", compressed))
                    .startsWith("grpc-status: 13;");
            assertThat(curl(dir, etcd.clientPort(), "/etcdserverpb.KV/Range", compressed))
                    .startsWith("grpc-status: 13;");
            byte[] truncated = {0, 0, 0, 0, 16, 0x0a};
            assertThat(curl(dir, nodePort, "/etcdserverpb.KV/Range", truncated))
                    .isEqualTo("grpc-status: 13; grpc-message: Encountered end-of-stream mid-frame; ");

            // Still serving, and not one stack trace: each of these is at most a line.
            assertThat(unary(toNode, "etcdserverpb.KV/Range", new byte[] {0x0a, 1, 'k'})
                            .getCode())
                    .isEqualTo(Status.Code.OK);
            String log = node.process().logTail(5000);
            assertThat(log).doesNotContain("\tat ").doesNotContain("Exception").doesNotContain(" ERROR ");
            assertThat(log).contains("answered RESOURCE_EXHAUSTED").contains("answered INTERNAL");
        }
    }
}

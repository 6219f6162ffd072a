package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Request targets as clients send them, bytes and all: what Undertow's parser would refuse
 * gets the API's 400 with a JSON Status; keys are bytes, decoded from the query exactly.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RequestTargetTest {
    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    private TestNode node;

    /** Asserts a 400 with a JSON BadRequest whose message contains every {@code expected}. */
    private static void assertBadRequest(String response, String... expected) throws Exception {
        assertThat(response).startsWith("HTTP/1.1 400").containsIgnoringCase("content-type: application/json");
        Status s = Frames.parseStatus(RawHttp.body(response));
        assertThat(s.getCode()).isEqualTo(400);
        assertThat(s.getReason()).isEqualTo("BadRequest");
        assertThat(s.getMessage()).contains(expected).contains("expected");
    }

    @Test
    void targetsUndertowWouldRefuseGetAStatusNamingTheParameterAndValue() throws Exception {
        node = nodes.start(1000, 64, true);
        assertBadRequest(RawHttp.get(node, "/v1/watch?key=%zz"), "parameter key", "\"%zz\"", "position 0");
        assertBadRequest(RawHttp.get(node, "/v1/watch?key=ab%2"), "parameter key", "\"ab%2\"", "position 2");
        assertBadRequest(
                RawHttp.get(node, "/v1/watch?key=a&resourceVersion=1%G0"), "parameter resourceVersion", "\"1%G0\"");
        assertBadRequest(RawHttp.get(node, "/v1/kv?key=a^b"), "parameter key", "\"a^b\"", "%5E");
        assertBadRequest(RawHttp.get(node, "/v1/watch?key=\u00c3("), "parameter key", "%C3(", "%C3");
        assertBadRequest(RawHttp.get(node, "/v1/watch?key=a#frag"), "parameter key", "%23");
        assertBadRequest(RawHttp.get(node, "/v1/wa%zztch?key=a"), "request path", "\"/v1/wa%zztch\"");
        assertBadRequest(RawHttp.get(node, "/v1/watch?k%zzey=a"), "parameter name", "\"k%zzey\"");
    }

    @Test
    void everyByteOfATargetIsEitherTakenOrAnsweredWithAStatus() throws Exception {
        node = nodes.start(1000, 64, true);
        StringBuilder taken = new StringBuilder();
        for (int b = 1; b < 256; b++) {
            if (b == ' ' || b == '\r' || b == '\n' || b == '%') {
                continue;
            }
            String target = "/v1/kv?key=a" + (char) b;
            String response = RawHttp.get(node, target);
            if (response.startsWith("HTTP/1.1 200")) {
                taken.append((char) b);
                assertThat(RequestTargetRewriter.isAllowedRaw(b))
                        .as("byte 0x%02x", b)
                        .isTrue();
            } else {
                assertThat(RequestTargetRewriter.isAllowedRaw(b))
                        .as("byte 0x%02x", b)
                        .isFalse();
                assertBadRequest(response, "parameter key");
            }
        }
        // Undertow 2.3.27's parser takes exactly these raw, in the path and in the query.
        assertThat(taken.toString())
                .isEqualTo("!$&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~");
    }

    @Test
    void aRefusedTargetLeavesTheConnectionServingThePipelinedRequestsAfterIt() throws Exception {
        node = nodes.start(1000, 64, true);
        node.feed(node.etcd.put("a", "1"));
        try (Socket s = RawHttp.connect(node, 0)) {
            s.getOutputStream()
                    .write(("GET /v1/kv?key=%zz HTTP/1.1\r\nHost: x\r\n\r\n"
                                    + "GET /v1/kv?key=a HTTP/1.1\r\nHost: x\r\n\r\n"
                                    + "GET /v1/kv?key=b^ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            String[] responses = all.split("(?=HTTP/1.1 )");
            assertThat(responses).hasSize(3);
            assertBadRequest(responses[0], "%zz");
            assertThat(responses[1]).startsWith("HTTP/1.1 200").contains("\"resourceVersion\":\"101\"");
            assertBadRequest(responses[2], "b^");
        }
    }

    @Test
    void keysAreBytesPlusIsASpaceAndPercentEscapesAreExact() throws Exception {
        node = nodes.start(1000, 64, true);
        ByteString notUtf8 = ByteString.copyFrom(new byte[] {(byte) 0xc3, '('});
        ByteString zero = ByteString.copyFrom(new byte[] {'z', 0});
        node.feed(node.etcd.put("a b", "space"));
        node.feed(node.etcd.put("a+b", "plus"));
        node.feed(node.etcd.putBytes(notUtf8, "not UTF-8"));
        node.feed(node.etcd.putBytes(zero, "zero byte"));
        assertThat(list("/v1/kv?key=a+b")).containsExactly("space");
        assertThat(list("/v1/kv?key=a%20b")).containsExactly("space");
        assertThat(list("/v1/kv?key=a%2Bb")).containsExactly("plus");
        assertThat(list("/v1/kv?key=a%2bb")).containsExactly("plus");
        assertThat(list("/v1/kv?key=%C3%28")).containsExactly("not UTF-8");
        assertThat(list("/v1/kv?key=z%00")).containsExactly("zero byte");
        assertThat(list("/v1/kv?key=z")).isEmpty();

        // A watch on the non-UTF-8 key gets its event with the key's exact bytes.
        try (Socket s = RawHttp.connect(node, 0)) {
            RawHttp.sendGet(s, "/v1/watch?key=%C3%28", "Accept: application/x-protobuf\r\n");
            InputStream in = s.getInputStream();
            assertThat(RawHttp.readHeaders(in)).startsWith("HTTP/1.1 200");
            node.feed(node.etcd.putBytes(notUtf8, "again"));
            node.feed(node.etcd.put("\u00c3(", "the UTF-8 encoding of another key"));
            WatchEvent e = Frames.decodeDelimited(RawHttp.readChunkBytes(in)).get(0);
            assertThat(e.getObject().getKey()).isEqualTo(notUtf8);
            assertThat(e.getObject().getValue().toStringUtf8()).isEqualTo("again");
        }
    }

    private java.util.List<String> list(String target) throws Exception {
        String response = RawHttp.get(node, target);
        assertThat(response).as(target).startsWith("HTTP/1.1 200");
        KeyValueList.Builder b = KeyValueList.newBuilder();
        JsonFormat.parser().merge(RawHttp.body(response), b);
        return b.getKvsList().stream()
                .map(KeyValue::getValue)
                .map(ByteString::toStringUtf8)
                .toList();
    }
}

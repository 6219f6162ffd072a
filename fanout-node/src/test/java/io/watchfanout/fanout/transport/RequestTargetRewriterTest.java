package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** The byte-stream rewrite below Undertow's parser, fed in every possible split. */
class RequestTargetRewriterTest {

    private static String raw(String target) {
        return RequestTargetRewriter.INVALID_TARGET_PATH + "?raw="
                + Base64.getUrlEncoder().withoutPadding().encodeToString(target.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** The rewritten stream when {@code input} arrives in two reads split at {@code split}, then EOF. */
    private static String rewrite(String input, int split) {
        byte[] bytes = input.getBytes(StandardCharsets.ISO_8859_1);
        RequestTargetRewriter r = new RequestTargetRewriter();
        RequestTargetRewriter.Output out = new RequestTargetRewriter.Output();
        r.process(ByteBuffer.wrap(bytes, 0, split), out);
        r.process(ByteBuffer.wrap(bytes, split, bytes.length - split), out);
        r.finish(out);
        ByteBuffer dst = ByteBuffer.allocate(out.remaining());
        out.drainTo(dst);
        return new String(dst.array(), StandardCharsets.ISO_8859_1);
    }

    /** Asserts the same output for every split of the input, and returns it. */
    private static String rewriteAllSplits(String input) {
        String whole = rewrite(input, 0);
        for (int split = 1; split <= input.length(); split++) {
            assertThat(rewrite(input, split)).as("split at %d", split).isEqualTo(whole);
        }
        return whole;
    }

    @Test
    void validRequestsPassUnchanged() {
        String in = "GET /v1/watch?key=%2Fa%2F&prefix=true&rangeEnd=%00+x!$&'()*,;=:@[]~_-. HTTP/1.1\r\n"
                + "Host: x\r\nAccept: text/event-stream\r\n\r\n"
                + "\r\nGET /v1/kv?key=a HTTP/1.1\r\nHost: x\r\n\r\n";
        assertThat(rewriteAllSplits(in)).isEqualTo(in);
    }

    @Test
    void refusedTargetsAreRewrittenWithTheirBytes() {
        for (String target : new String[] {
            "/v1/watch?key=%zz",
            "/v1/watch?key=%2",
            "/v1/watch?key=a%",
            "/v1/wa%zztch",
            "/v1/watch?key=a^b",
            "/v1/watch?key=a#b",
            "/v1/watch?key=\u00c3(",
            "/v1/watch?key=a\"b",
            "/v1/watch?key=a\tb",
            "/v1/watch?key=a{b}|\\`<>",
            "/v1/watch?key=\u007f"
        }) {
            String in = "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n";
            assertThat(rewriteAllSplits(in))
                    .as(target)
                    .isEqualTo("GET " + raw(target) + " HTTP/1.1\r\nHost: x\r\n\r\n");
        }
    }

    @Test
    void followsPipelinedRequestsAndSkipsBodiesByContentLength() {
        String body = "GET /x?%zz HTTP/1.1\r\n";
        String in = "GET /v1/watch?key=%zz HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /v1/watch HTTP/1.1\r\nContent-Length: " + body.length() + "\r\n\r\n" + body
                + "GET /v1/kv?key=^ HTTP/1.1\r\n\r\n";
        String expected = "GET " + raw("/v1/watch?key=%zz") + " HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /v1/watch HTTP/1.1\r\nContent-Length: " + body.length() + "\r\n\r\n" + body
                + "GET " + raw("/v1/kv?key=^") + " HTTP/1.1\r\n\r\n";
        assertThat(rewriteAllSplits(in)).as("the body is not a request").isEqualTo(expected);
    }

    @Test
    void stopsFollowingWhatItCannotFrame() {
        for (String header : new String[] {"Transfer-Encoding: chunked", "Upgrade: websocket", "Content-Length: x"}) {
            String in = "POST /a HTTP/1.1\r\n" + header + "\r\n\r\nGET /v1/watch?key=%zz HTTP/1.1\r\n\r\n";
            assertThat(rewriteAllSplits(in)).as(header).isEqualTo(in);
        }
        String longTarget = "/" + "a".repeat(RequestTargetRewriter.MAX_TARGET_BYTES) + "%zz";
        String in = "GET " + longTarget + " HTTP/1.1\r\n\r\n";
        assertThat(rewrite(in, 7)).as("longer than the bound: unguarded").isEqualTo(in);
    }

    @Test
    void anIncompleteTargetAtEndOfInputGoesOutUnchanged() {
        String in = "GET /v1/watch?key=%z";
        assertThat(rewriteAllSplits(in)).isEqualTo(in);
    }

    @Test
    void outputLargerThanTheReadersBufferIsHandedOutInPieces() {
        RequestTargetRewriter r = new RequestTargetRewriter();
        RequestTargetRewriter.Output out = new RequestTargetRewriter.Output();
        String in = "GET /v1/watch?key=" + "%zz".repeat(2000) + " HTTP/1.1\r\n\r\n";
        r.process(ByteBuffer.wrap(in.getBytes(StandardCharsets.ISO_8859_1)), out);
        StringBuilder got = new StringBuilder();
        ByteBuffer small = ByteBuffer.allocate(100);
        while (out.remaining() > 0) {
            small.clear();
            out.drainTo(small);
            got.append(new String(small.array(), 0, small.position(), StandardCharsets.ISO_8859_1));
        }
        assertThat(got.toString()).isEqualTo("GET " + raw("/v1/watch?key=" + "%zz".repeat(2000)) + " HTTP/1.1\r\n\r\n");
    }
}

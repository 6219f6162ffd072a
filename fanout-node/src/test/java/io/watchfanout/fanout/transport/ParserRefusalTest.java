package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.Status;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * Requests Undertow's HTTP parser cannot read at all (a malformed request line or header line,
 * headers over the limit), sent over a raw socket: a 400 with a JSON {@code Status} body, not
 * Undertow's bare 400, the connection closed after it, and no stack trace logged; a good request
 * before the bad one on the same connection is answered as usual.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ParserRefusalTest {
    @RegisterExtension
    final TestNodes nodes = new TestNodes();

    /** Sends {@code bytes} on a new connection and reads until the node closes it. */
    private static String exchange(TestNode node, String bytes) throws Exception {
        try (Socket s = RawHttp.connect(node, 0)) {
            s.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
            s.getOutputStream().flush();
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static void assertRefusedWithStatus(String response) throws Exception {
        assertThat(response)
                .startsWith("HTTP/1.1 400 Bad Request\r\n")
                .containsIgnoringCase("content-type: application/json")
                .containsIgnoringCase("connection: close");
        Status s = Frames.parseStatus(RawHttp.body(response));
        assertThat(s.getCode()).isEqualTo(400);
        assertThat(s.getReason()).isEqualTo("BadRequest");
        assertThat(s.getMessage())
                .contains("malformed request line or header line")
                .contains("expected");
        int length = Integer.parseInt(response.replaceAll("(?s).*[Cc]ontent-[Ll]ength: (\\d+).*", "$1"));
        assertThat(RawHttp.body(response)).hasSize(length);
    }

    @Test
    void whatTheParserRefusesGetsAStatusBodyAndNoStackTrace() throws Exception {
        TestNode node = nodes.start(1000, 64, true);
        node.feed(node.etcd.put("a", "1"));
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        try {
            assertRefusedWithStatus(exchange(node, "GARBAGE\r\n\r\n"));
            assertRefusedWithStatus(exchange(node, "GET /v1/kv?key=a HTTP/1.1\r\nHost x\r\n\r\n"));
            assertRefusedWithStatus(exchange(
                    node,
                    "GET /v1/kv?key=a HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(HttpApi.MAX_HEADER_BYTES)
                            + "\r\n\r\n"));
            // A good request, then one the parser refuses, on one connection.
            String both = exchange(
                    node,
                    "GET /v1/kv?key=a HTTP/1.1\r\nHost: x\r\n\r\n" + "GET /v1/kv?key=a HTTP/1.1\r\nHost x\r\n\r\n");
            String[] responses = both.split("(?=HTTP/1.1 )");
            assertThat(responses).hasSize(2);
            assertThat(responses[0]).startsWith("HTTP/1.1 200").contains("\"resourceVersion\":\"101\"");
            assertRefusedWithStatus(responses[1]);
        } finally {
            root.detachAppender(logged);
        }
        assertThat(logged.list)
                .as("log lines with a stack trace")
                .noneMatch(e -> e.getThrowableProxy() != null && e.getLevel().isGreaterOrEqual(Level.INFO));
        // And the node serves on.
        assertThat(RawHttp.get(node, "/v1/kv?key=a")).startsWith("HTTP/1.1 200");
    }

    @Test
    void undertowsHostCheckGetsAStatusBodyNamingWhatIsWrong() throws Exception {
        TestNode node = nodes.start(1000, 64, true);
        node.feed(node.etcd.put("a", "1"));
        for (String[] c : new String[][] {
            {"GET /v1/kv?key=a HTTP/1.1\r\n\r\n", "No Host Header"},
            {"GET http://evil/v1/kv?key=a HTTP/1.1\r\nHost: x\r\n\r\n", "URI Host Header NO MATCH"},
            {"GET /v1/kv?key=a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "Only One Host Header Allowed"},
        }) {
            String response = exchange(node, c[0]);
            assertThat(response)
                    .as(c[0])
                    .startsWith("HTTP/1.1 400 " + c[1] + "\r\n")
                    .containsIgnoringCase("content-type: application/json")
                    .containsIgnoringCase("connection: close");
            Status s = Frames.parseStatus(RawHttp.body(response));
            assertThat(s.getReason()).isEqualTo("BadRequest");
            assertThat(s.getMessage()).contains("Host header", c[1], "expected");
            int length = Integer.parseInt(response.replaceAll("(?s).*[Cc]ontent-[Ll]ength: (\\d+).*", "$1"));
            assertThat(RawHttp.body(response)).hasSize(length);
        }
        // HTTP/1.0 needs no Host, and a good request is untouched.
        assertThat(exchange(node, "GET /v1/kv?key=a HTTP/1.0\r\n\r\n"))
                .startsWith("HTTP/1.0 200")
                .contains("\"resourceVersion\":\"101\"");
    }
}

package io.watchfanout.fanout.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 over a plain socket, for what {@code java.net.http} will not do: send any bytes as
 * a request target, stall a reader, or see the chunks of a response.
 */
final class RawHttp {
    private RawHttp() {}

    /** Connects to the node, optionally with a small receive buffer (a reader that stalls soon). */
    static Socket connect(TestNode node, int receiveBufferBytes) throws IOException {
        Socket s = new Socket();
        if (receiveBufferBytes > 0) {
            s.setReceiveBufferSize(receiveBufferBytes);
        }
        s.connect(new InetSocketAddress("127.0.0.1", node.api.port()));
        return s;
    }

    /** Sends {@code GET <target>} with extra header lines (each ending in CRLF). */
    static void sendGet(Socket s, String target, String extraHeaders) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(("GET " + target + " HTTP/1.1\r\nHost: x\r\n" + extraHeaders + "\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** One request on a new connection that closes after it; the whole response as text. */
    static String get(TestNode node, String target) throws IOException {
        try (Socket s = connect(node, 0)) {
            sendGet(s, target, "Connection: close\r\n");
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    /** Reads a response's status line and headers. */
    static String readHeaders(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (!sb.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("EOF in headers: " + sb);
            }
            sb.append((char) c);
        }
        return sb.toString();
    }

    /** Reads one HTTP chunk and returns its data; null at the last (empty) chunk. */
    static byte[] readChunkBytes(InputStream in) throws IOException {
        StringBuilder size = new StringBuilder();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("EOF");
            }
            size.append((char) c);
        }
        in.read();
        int n = Integer.parseInt(size.toString(), 16);
        byte[] data = in.readNBytes(n);
        in.readNBytes(2);
        return n == 0 ? null : data;
    }

    /** Reads one HTTP chunk and returns its data as text; null at the last (empty) chunk. */
    static String readChunk(InputStream in) throws IOException {
        byte[] data = readChunkBytes(in);
        return data == null ? null : new String(data, StandardCharsets.UTF_8);
    }

    /** The body of a complete (Content-Length) response text. */
    static String body(String response) {
        return response.substring(response.indexOf("\r\n\r\n") + 4);
    }
}

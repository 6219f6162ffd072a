package io.watchfanout.bench.chaos;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Minimal HTTP/1.1 response head parsing on a blocking stream. */
final class HttpLines {
    private HttpLines() {}

    /** A status line and headers (names in lower case). */
    record Head(int status, Map<String, String> headers) {
        boolean chunked() {
            return headers.getOrDefault("transfer-encoding", "")
                    .toLowerCase(Locale.ROOT)
                    .contains("chunked");
        }

        long contentLength() {
            String v = headers.get("content-length");
            return v == null ? -1 : Long.parseLong(v.trim());
        }
    }

    /** One line without its CRLF; EOFException at the end of the stream. */
    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream(64);
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new EOFException("connection closed");
            }
            if (c == '\n') {
                break;
            }
            if (c != '\r') {
                b.write(c);
            }
            if (b.size() > 16384) {
                throw new IOException("line too long");
            }
        }
        return b.toString(StandardCharsets.ISO_8859_1);
    }

    static Head readHead(InputStream in) throws IOException {
        String status = readLine(in);
        String[] parts = status.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/")) {
            throw new IOException("bad status line: '" + status + "'");
        }
        int code;
        try {
            code = Integer.parseInt(parts[1]);
        } catch (NumberFormatException e) {
            throw new IOException("bad status line: '" + status + "'", e);
        }
        Map<String, String> headers = new TreeMap<>();
        while (true) {
            String line = readLine(in);
            if (line.isEmpty()) {
                return new Head(code, headers);
            }
            int colon = line.indexOf(':');
            if (colon > 0) {
                headers.put(
                        line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        line.substring(colon + 1).trim());
            }
        }
    }

    /** The whole body of a response with this head. */
    static byte[] readBody(InputStream in, Head head) throws IOException {
        if (head.chunked()) {
            return new ChunkedInput(in).readAllBytes();
        }
        long n = head.contentLength();
        if (n >= 0) {
            return in.readNBytes((int) n);
        }
        return in.readAllBytes();
    }
}

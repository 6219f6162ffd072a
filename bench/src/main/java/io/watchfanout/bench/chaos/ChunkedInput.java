package io.watchfanout.bench.chaos;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * The body of an HTTP/1.1 response with {@code Transfer-Encoding: chunked}, as a stream: ends
 * (-1) at the last chunk. Not thread-safe.
 */
final class ChunkedInput extends InputStream {
    private final InputStream in;
    private long left;
    private boolean done;

    ChunkedInput(InputStream in) {
        this.in = in;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (done) {
            return -1;
        }
        if (left == 0) {
            long size = chunkSize();
            if (size == 0) {
                done = true;
                return -1;
            }
            left = size;
        }
        int n = in.read(b, off, (int) Math.min(len, left));
        if (n < 0) {
            throw new EOFException("connection closed inside a chunk");
        }
        left -= n;
        if (left == 0) {
            crlf();
        }
        return n;
    }

    private long chunkSize() throws IOException {
        String line = HttpLines.readLine(in);
        int semi = line.indexOf(';');
        String hex = (semi >= 0 ? line.substring(0, semi) : line).trim();
        try {
            return Long.parseLong(hex, 16);
        } catch (NumberFormatException e) {
            throw new IOException("bad chunk size line: '" + line + "'", e);
        }
    }

    private void crlf() throws IOException {
        String line = HttpLines.readLine(in);
        if (!line.isEmpty()) {
            throw new IOException("expected CRLF after a chunk, got '" + line + "'");
        }
    }
}

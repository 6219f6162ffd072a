package io.watchfanout.fanout.transport;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Locale;

/**
 * Finds request targets that Undertow's request parser would refuse with a bare 400 (no body,
 * connection closed) and rewrites them so that the API can answer 400 with a JSON
 * {@code Status} naming the parameter and the value (README.md, "The watch protocol", errors).
 *
 * <p>Undertow 2.3's parser refuses, whatever {@code DECODE_URL} says, a {@code %} not
 * followed by two hex digits and every raw byte outside RFC 3986's characters (controls,
 * {@code " # < > \ ^ ` { | }}, DEL, bytes {@code >= 0x80}); checked byte by byte against
 * 2.3.27, the same set in the path and in the query. This rewriter sits below the parser, on
 * the connection's byte stream: it follows HTTP/1.1 request heads (request line, header lines,
 * {@code Content-Length} bodies), holds each request target until its end, and replaces a
 * target with such a byte by {@value #INVALID_TARGET_PATH}{@code ?raw=<base64url of the
 * target>}, which {@link InvalidTargetHandler} explains. Every other byte passes unchanged.
 *
 * <p>It stops following a connection (passes everything through from then on, so a later bad
 * target gets Undertow's bare 400 again) after a request whose body it cannot frame
 * ({@code Transfer-Encoding}, a bad {@code Content-Length}), an {@code Upgrade} request, a
 * request line that is not HTTP/1.x, or a target longer than {@value #MAX_TARGET_BYTES}
 * bytes. The node's API has no request bodies and no upgrades, so in practice it follows every
 * connection to the end.
 *
 * <p>Not thread-safe: one instance per connection, used by its reader.
 */
final class RequestTargetRewriter {
    /** Where a refused target is sent instead, with its bytes as {@code raw} (base64url). */
    static final String INVALID_TARGET_PATH = "/.watchfanout/invalid-target";
    /** Longer targets are passed on unguarded. */
    static final int MAX_TARGET_BYTES = 64 * 1024;

    private static final int MAX_METHOD_BYTES = 32;
    private static final int MAX_HEADER_LINE_CHARS = 256;
    private static final byte[] REWRITTEN_PREFIX = (INVALID_TARGET_PATH + "?raw=").getBytes(StandardCharsets.US_ASCII);

    private enum State {
        METHOD,
        TARGET,
        REQUEST_LINE,
        HEADERS,
        BODY,
        PASSTHROUGH
    }

    private State state = State.METHOD;
    private int methodBytes;
    private byte[] target = new byte[128];
    private int targetLength;
    private boolean targetValid;
    /** Hex digits still expected after a {@code %} of the target. */
    private int hexExpected;

    private final StringBuilder line = new StringBuilder();
    private boolean lineOverflow;
    private long contentLength;
    private boolean unframed;
    private long bodyLeft;

    /**
     * Whether Undertow's parser takes {@code b} raw (unescaped) in a request target.
     * {@code %} is not among them: it must start an escape.
     */
    static boolean isAllowedRaw(int b) {
        if (b >= 'a' && b <= 'z' || b >= '?' && b <= '[' || b >= '&' && b <= ';') {
            return true;
        }
        return b == '!' || b == '$' || b == '=' || b == ']' || b == '_' || b == '~';
    }

    static boolean isHex(int b) {
        return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F';
    }

    /** True once the connection is no longer followed: bytes pass through unchanged. */
    boolean passthrough() {
        return state == State.PASSTHROUGH;
    }

    /** Consumes all of {@code in} and appends what the parser should read to {@code out}. */
    void process(ByteBuffer in, Output out) {
        while (in.hasRemaining()) {
            switch (state) {
                case PASSTHROUGH:
                    out.write(in, in.remaining());
                    return;
                case BODY:
                    int n = (int) Math.min(bodyLeft, in.remaining());
                    out.write(in, n);
                    bodyLeft -= n;
                    if (bodyLeft == 0) {
                        startRequest();
                    }
                    break;
                default:
                    step(in.get(), out);
            }
        }
    }

    /** The connection's input ended: a target still held goes out unchanged. */
    void finish(Output out) {
        if (state == State.TARGET) {
            out.write(target, 0, targetLength);
            targetLength = 0;
        }
        state = State.PASSTHROUGH;
    }

    private void startRequest() {
        state = State.METHOD;
        methodBytes = 0;
    }

    private void step(byte b, Output out) {
        switch (state) {
            case METHOD:
                out.write(b);
                if (b == ' ') {
                    state = State.TARGET;
                    targetLength = 0;
                    targetValid = true;
                    hexExpected = 0;
                } else if (b == '\r' || b == '\n') {
                    if (methodBytes > 0) {
                        state = State.PASSTHROUGH;
                    }
                } else if (++methodBytes > MAX_METHOD_BYTES) {
                    state = State.PASSTHROUGH;
                }
                break;
            case TARGET:
                if (b == ' ') {
                    emitTarget(out);
                    out.write(b);
                    state = State.REQUEST_LINE;
                } else if (b == '\r' || b == '\n' || targetLength == MAX_TARGET_BYTES) {
                    out.write(target, 0, targetLength);
                    out.write(b);
                    state = State.PASSTHROUGH;
                } else {
                    hold(b);
                }
                break;
            case REQUEST_LINE:
                out.write(b);
                if (b == '\n') {
                    state = State.HEADERS;
                    contentLength = -1;
                    unframed = false;
                    line.setLength(0);
                    lineOverflow = false;
                }
                break;
            default: // HEADERS
                out.write(b);
                if (b == '\n') {
                    endHeaderLine();
                } else if (b != '\r') {
                    if (line.length() < MAX_HEADER_LINE_CHARS) {
                        line.append((char) (b & 0xff));
                    } else {
                        lineOverflow = true;
                    }
                }
        }
    }

    private void hold(byte b) {
        if (targetLength == target.length) {
            target = Arrays.copyOf(target, Math.min(MAX_TARGET_BYTES, target.length * 2));
        }
        target[targetLength++] = b;
        int v = b & 0xff;
        if (hexExpected > 0) {
            hexExpected--;
            targetValid &= isHex(v);
        } else if (v == '%') {
            hexExpected = 2;
        } else if (!isAllowedRaw(v)) {
            targetValid = false;
        }
    }

    private void emitTarget(Output out) {
        if (targetValid && hexExpected == 0) {
            out.write(target, 0, targetLength);
        } else {
            out.write(REWRITTEN_PREFIX, 0, REWRITTEN_PREFIX.length);
            byte[] raw = Base64.getUrlEncoder().withoutPadding().encode(Arrays.copyOf(target, targetLength));
            out.write(raw, 0, raw.length);
        }
        if (target.length > 1024) {
            target = new byte[128];
        }
        targetLength = 0;
    }

    private void endHeaderLine() {
        if (line.length() == 0 && !lineOverflow) {
            if (unframed) {
                state = State.PASSTHROUGH;
            } else if (contentLength > 0) {
                bodyLeft = contentLength;
                state = State.BODY;
            } else {
                startRequest();
            }
            return;
        }
        int colon = line.indexOf(":");
        if (colon > 0) {
            String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = line.substring(colon + 1).trim();
            if (name.equals("content-length")) {
                contentLength(value);
            } else if (name.equals("transfer-encoding") || name.equals("upgrade")) {
                unframed = true;
            }
        } else if (lineOverflow && line.toString().toLowerCase(Locale.ROOT).startsWith("content-length")) {
            unframed = true;
        }
        line.setLength(0);
        lineOverflow = false;
    }

    private void contentLength(String value) {
        try {
            long n = Long.parseLong(value);
            if (!lineOverflow && n >= 0 && (contentLength < 0 || contentLength == n)) {
                contentLength = n;
                return;
            }
        } catch (NumberFormatException e) {
            // unframed below
        }
        unframed = true;
    }

    /**
     * Bytes for the parser, written by {@link #process} and read by the conduit. Grows as
     * needed; {@link #drainTo} frees a large array once it is empty, so that an idle
     * connection keeps no buffer.
     */
    static final class Output {
        private static final int KEEP_BYTES = 4096;
        private byte[] buf;
        private int start;
        private int end;

        int remaining() {
            return end - start;
        }

        void write(byte b) {
            ensure(1);
            buf[end++] = b;
        }

        void write(byte[] bytes, int offset, int length) {
            ensure(length);
            System.arraycopy(bytes, offset, buf, end, length);
            end += length;
        }

        void write(ByteBuffer in, int length) {
            ensure(length);
            in.get(buf, end, length);
            end += length;
        }

        private void ensure(int extra) {
            if (buf == null) {
                buf = new byte[Math.max(256, extra)];
            } else if (end + extra > buf.length) {
                int used = end - start;
                byte[] next = used + extra > buf.length ? new byte[Math.max(buf.length * 2, used + extra)] : buf;
                System.arraycopy(buf, start, next, 0, used);
                buf = next;
                start = 0;
                end = used;
            }
        }

        /** Moves as many bytes as fit into {@code dst}; returns how many. */
        int drainTo(ByteBuffer dst) {
            int n = Math.min(remaining(), dst.remaining());
            dst.put(buf, start, n);
            start += n;
            if (start == end) {
                start = 0;
                end = 0;
                if (buf.length > KEEP_BYTES) {
                    buf = null;
                }
            }
            return n;
        }
    }
}

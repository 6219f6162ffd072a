package io.watchfanout.fanout.kube;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.undertow.util.HttpString;
import io.watchfanout.kube.codec.KubeListWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * The body of one successful Kubernetes read, written from a worker thread. The first
 * {@link #HOLD_BYTES} are held back, so that a small answer still gets its {@code Warning}
 * header (fields unknown to the schema are only known once the objects are rendered) and a
 * failure while rendering it still becomes a {@code Status}; beyond that the response is
 * committed and streamed through Undertow's pooled buffers, so that memory grows with an item,
 * not with the list. A failure after the commit can only break the response (the connection is
 * closed), as kube-apiserver's would be.
 *
 * <p>Not thread-safe: one per response, used by the worker thread that serves it.
 */
final class KubeResponse implements KubeListWriter.Sink {
    /** Bytes held before the response is committed: a page of kubectl's 500 pods fits. */
    static final int HOLD_BYTES = 1024 * 1024;

    static final HttpString WARNING = new HttpString("Warning");

    /**
     * Each worker thread's hold buffer, made once and reused by every answer it serves: a list
     * then allocates nothing for the bytes it holds back (the answer is written out, blocking,
     * before the thread serves another).
     */
    private static final ThreadLocal<byte[]> HOLD = ThreadLocal.withInitial(() -> new byte[HOLD_BYTES]);

    private final HttpServerExchange exchange;
    private final String contentType;
    private byte[] held;
    private int heldLength;
    private OutputStream out;
    private int unknownFields;

    KubeResponse(HttpServerExchange exchange, String contentType) {
        this.exchange = exchange;
        this.contentType = contentType;
    }

    /** Notes fields the schema did not know in what was rendered; announced if the headers are still open. */
    @Override
    public void unknownFields(int n) {
        unknownFields += n;
    }

    /** The fields unknown to the schema noted so far. */
    int unknownFields() {
        return unknownFields;
    }

    /** Whether the status and headers have been sent. */
    boolean committed() {
        return out != null;
    }

    @Override
    public void write(byte[] buf, int off, int len) {
        try {
            if (out != null) {
                out.write(buf, off, len);
                return;
            }
            if (held == null) {
                held = HOLD.get();
            }
            if (heldLength + len <= held.length) {
                System.arraycopy(buf, off, held, heldLength, len);
                heldLength += len;
                return;
            }
            headers();
            exchange.startBlocking();
            out = exchange.getOutputStream();
            out.write(held, 0, heldLength);
            held = null;
            out.write(buf, off, len);
        } catch (IOException e) {
            throw new UncheckedIOException("writing a Kubernetes list to the client", e);
        }
    }

    /** Ends the response: sends what is held (with its length), or closes the stream. */
    void finish() {
        try {
            if (out == null) {
                headers();
                exchange.getResponseHeaders().put(Headers.CONTENT_LENGTH, heldLength);
                exchange.startBlocking();
                out = exchange.getOutputStream();
                if (heldLength > 0) {
                    out.write(held, 0, heldLength);
                }
                held = null;
            }
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("ending a Kubernetes response", e);
        }
    }

    private void headers() {
        exchange.setStatusCode(200);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
        if (unknownFields > 0) {
            exchange.getResponseHeaders().put(WARNING, unknownFieldsWarning(unknownFields));
        }
    }

    /**
     * The {@code Warning} header of a JSON answer that left out fields unknown to the node's
     * schema, in kube-apiserver's warning form ({@code 299 - "text"}).
     */
    static String unknownFieldsWarning(int fields) {
        return "299 - \"" + fields + " field(s) of the stored objects are unknown to this node's Kubernetes schema "
                + "(a newer cluster) and are left out of this JSON answer; ask for "
                + "application/vnd.kubernetes.protobuf to receive them\"";
    }
}

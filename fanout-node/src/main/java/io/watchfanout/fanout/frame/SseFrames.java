package io.watchfanout.fanout.frame;

import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The Server-Sent Events form of watch frames (README.md, "The watch protocol"):
 * <pre>
 * id: &lt;resource_version&gt;
 * event: &lt;TYPE&gt;
 * data: &lt;the JSON frame without its newline&gt;
 * (blank line)
 * </pre>
 * built from the JSON bytes (the proto3 JSON has no raw newline, so one {@code data:} line
 * holds it).
 *
 * <h2>Where the {@code id:} line goes</h2>
 * An EventSource client remembers the last {@code id} it received and, after a lost
 * connection, sends it as {@code Last-Event-ID}; the node resumes after that revision. So an
 * {@code id} must only ever name a point where everything before it has been received: the
 * end of a revision for this watcher, or a bookmark. The rule:
 * <ul>
 *   <li>an event frame carries {@code id: <its revision>} only when it is the last frame of
 *       its revision that this watcher receives; the other frames of a multi-event revision
 *       carry no {@code id} (an absent field keeps the client's last id, which is the end of the
 *       previous revision or a bookmark). A watcher that matches only some events of a
 *       revision gets the id on the last one it matches, not on index {@code count - 1}, which
 *       it may never see;</li>
 *   <li>BOOKMARK frames (periodic, final, and the one closing sendInitialEvents) carry their
 *       revision;</li>
 *   <li>initial events (sendInitialEvents) and ERROR frames carry no {@code id}: a client cut
 *       off inside the initial list has no id yet and lists again.</li>
 * </ul>
 * Hence no event is ever lost: a client cut off inside a revision resumes from the end of
 * the previous one and receives the cut revision again, whole; the frames of that revision
 * it had received before the cut are repeated (they carry {@code resource_version},
 * {@code index} and {@code count}, so a client can drop them). Cuts between revisions, and
 * every single-event revision, resume exactly once.
 *
 * <p>Sharing: the frame with the {@code id} line is encoded once per event; the frame without
 * it is a read-only slice of the same bytes ({@link #withoutId}), so both variants are shared
 * by every SSE watcher and the event is still encoded once.
 *
 * <p>Stateless and thread-safe.
 */
final class SseFrames {
    private static final byte[] ID = "id: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] EVENT = "\nevent: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DATA = "\ndata: ".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] END = "\n\n".getBytes(StandardCharsets.US_ASCII);

    private SseFrames() {}

    /**
     * The SSE frame of {@code event}.
     *
     * @param withId whether the frame carries {@code id: <resource_version>}
     * @param json the canonical JSON of {@code event}, with or without a trailing newline
     * @param jsonLength how many bytes of {@code json} to use
     */
    static byte[] build(WatchEvent event, boolean withId, byte[] json, int jsonLength) {
        int length = jsonLength;
        if (length > 0 && json[length - 1] == '\n') {
            length--;
        }
        byte[] id = withId ? Long.toString(event.getResourceVersion()).getBytes(StandardCharsets.US_ASCII) : null;
        byte[] type = typeName(event).getBytes(StandardCharsets.US_ASCII);
        int size = (withId ? ID.length + id.length + 1 : 0)
                + EVENT.length
                - 1
                + type.length
                + DATA.length
                + length
                + END.length;
        ByteBuffer out = ByteBuffer.allocate(size);
        if (withId) {
            out.put(ID).put(id).put((byte) '\n');
        }
        out.put(EVENT, 1, EVENT.length - 1)
                .put(type)
                .put(DATA)
                .put(json, 0, length)
                .put(END);
        return out.array();
    }

    private static String typeName(WatchEvent event) {
        WatchEvent.Type type = event.getType();
        return type == WatchEvent.Type.UNRECOGNIZED ? Integer.toString(event.getTypeValue()) : type.name();
    }

    /**
     * The same frame without its {@code id:} line: a read-only view of the same bytes, or the
     * frame itself when it has none.
     */
    static ByteBuffer withoutId(ByteBuffer frame) {
        if (frame.remaining() < ID.length || frame.get(frame.position()) != 'i') {
            return frame;
        }
        int nl = frame.position();
        while (frame.get(nl) != '\n') {
            nl++;
        }
        ByteBuffer view = frame.duplicate();
        view.position(nl + 1);
        return view.slice().asReadOnlyBuffer();
    }
}

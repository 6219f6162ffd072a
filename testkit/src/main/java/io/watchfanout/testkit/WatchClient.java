package io.watchfanout.testkit;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A watch client of the tests, as a user would write one against the README's "The watch
 * protocol": streams a fan-out node's {@code GET /v1/watch} (with {@code allowWatchBookmarks}) on
 * a thread of its own, decodes JSON lines, delimited protobuf or Server-Sent Events, and, when
 * its node goes away, resumes on another node from its resume point ({@link Resume}), dropping
 * the frames after it, which the new node sends again. An SSE client resumes as an EventSource
 * does: the same URL, and the last {@code id} it received as {@code Last-Event-ID}.
 *
 * <p>It needs the {@code schema} module and {@code protobuf-java-util} on the class path (the
 * testkit's optional dependencies). bench's {@code WatchLoadClient} is not this client: it holds
 * thousands of streams on a few NIO threads and counts frames rather than keeping them.
 *
 * <p>Thread-safe: the reader thread adds frames while the test reads them.
 */
public final class WatchClient implements AutoCloseable {
    /** The frames asked for with {@code Accept}, in the order of the node's encodings. */
    public enum Encoding {
        /** One JSON object a line. */
        JSON("application/json"),
        /** Length-delimited protobuf {@code WatchEvent}s. */
        PROTOBUF("application/x-protobuf"),
        /** Server-Sent Events, a JSON frame in each {@code data} line. */
        SSE("text/event-stream");

        private final String mediaType;

        Encoding(String mediaType) {
            this.mediaType = mediaType;
        }

        /**
         * The media type.
         *
         * @return the {@code Accept} value that asks for this encoding
         */
        public String mediaType() {
            return mediaType;
        }
    }

    /** Where a resumed watch (JSON or protobuf) starts; an SSE watch resumes from its last {@code id}. */
    public enum Resume {
        /** From the last BOOKMARK's resourceVersion. */
        LAST_BOOKMARK,
        /**
         * From the last revision known to be complete: a later frame followed it, or its frame with
         * {@code index == count - 1} arrived.
         */
        LAST_COMPLETE_REVISION
    }

    /** One Server-Sent Events block: its fields ({@code id} null when absent) and the frame in its data. */
    public record SseEvent(String id, String event, WatchEvent frame) {}

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String name;
    private final String query;
    private final Encoding encoding;
    private final Resume resume;
    private final List<WatchEvent> frames = new ArrayList<>(); // guarded by itself
    private final List<String> connections = new ArrayList<>(); // guarded by this
    private HttpClient http = HTTP; // guarded by this
    private String authorization; // guarded by this
    /** SSE: how many frames had arrived when the last {@code id} came, and that id (-1: none). Guarded by frames. */
    private int framesAtLastId;

    private long lastEventId = -1;
    private volatile Thread reader;
    private volatile InputStream body;
    private volatile boolean ended = true;
    private volatile Throwable failure;

    /**
     * A watch of a query's range.
     *
     * @param name for messages
     * @param query the range part of the query, e.g. {@code key=%2Fa%2F&prefix=true} (see {@link #rangeQuery})
     * @param encoding the frames asked for
     * @param resume where a resumed JSON or protobuf watch starts
     */
    public WatchClient(String name, String query, Encoding encoding, Resume resume) {
        this.name = name;
        this.query = query;
        this.encoding = encoding;
        this.resume = resume;
    }

    /**
     * A watch of a key, a prefix or a range, resumed from its last complete revision.
     *
     * @param name for messages
     * @param key the watched key (raw string, encoded here)
     * @param mode "prefix", "key" or a range end
     * @param encoding the frames asked for
     */
    public WatchClient(String name, String key, String mode, Encoding encoding) {
        this(name, rangeQuery(key, mode), encoding, Resume.LAST_COMPLETE_REVISION);
    }

    /**
     * As {@link #WatchClient(String, String, String, Encoding)} with JSON or protobuf frames.
     *
     * @param name for messages
     * @param key the watched key (raw string, encoded here)
     * @param mode "prefix", "key" or a range end
     * @param json JSON lines, else protobuf frames
     */
    public WatchClient(String name, String key, String mode, boolean json) {
        this(name, key, mode, json ? Encoding.JSON : Encoding.PROTOBUF);
    }

    /**
     * The query of a watched range.
     *
     * @param key the watched key (raw string)
     * @param mode "prefix", "key" or a range end (raw string)
     * @return {@code key=...}, with {@code &prefix=true} or {@code &rangeEnd=...}, percent-encoded
     */
    public static String rangeQuery(String key, String mode) {
        String q = "key=" + enc(key);
        if (mode.equals("prefix")) {
            q += "&prefix=true";
        } else if (!mode.equals("key")) {
            q += "&rangeEnd=" + enc(mode);
        }
        return q;
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * The name.
     *
     * @return the name given
     */
    public String name() {
        return name;
    }

    /**
     * Whether the frames are JSON lines.
     *
     * @return true for {@link Encoding#JSON}
     */
    public boolean json() {
        return encoding == Encoding.JSON;
    }

    /**
     * The encoding.
     *
     * @return the frames asked for
     */
    public Encoding encoding() {
        return encoding;
    }

    /**
     * Connects through {@code http} from now on, e.g. one trusting a TLS node's certificate, and
     * sends {@code authorization} as every connection's {@code Authorization} header.
     *
     * @param http the client connections go through
     * @param authorization the header's value, e.g. {@code Bearer <token>}; null: none
     * @return this
     */
    public synchronized WatchClient through(HttpClient http, String authorization) {
        this.http = http;
        this.authorization = authorization;
        return this;
    }

    /**
     * Opens the stream on {@code baseUrl} from {@code resourceVersion}.
     *
     * @param baseUrl a node's {@code http://host:port}
     * @param resourceVersion the revision to watch from (0: from now)
     * @return the HTTP status; the stream is read only on 200
     * @throws IOException if the node cannot be reached
     * @throws InterruptedException if interrupted while connecting
     */
    public synchronized int connect(String baseUrl, long resourceVersion) throws IOException, InterruptedException {
        return connect(baseUrl, resourceVersion, -1);
    }

    /**
     * Reconnects as an EventSource does after a lost connection: the same URL (which still says
     * {@code resourceVersion=initialResourceVersion}) and {@code Last-Event-ID} with the last id
     * received, if any. Call {@link #trimToResumePoint} first.
     *
     * @param baseUrl a node's {@code http://host:port}
     * @param initialResourceVersion the revision of the first connection
     * @return the HTTP status
     * @throws IOException if the node cannot be reached
     * @throws InterruptedException if interrupted while connecting
     */
    public synchronized int reconnectAsEventSource(String baseUrl, long initialResourceVersion)
            throws IOException, InterruptedException {
        long lastId;
        synchronized (frames) {
            lastId = lastEventId;
        }
        return connect(baseUrl, initialResourceVersion, lastId);
    }

    private int connect(String baseUrl, long resourceVersion, long lastId) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/watch?" + query
                        + "&allowWatchBookmarks=true&resourceVersion=" + resourceVersion))
                .header("Accept", encoding.mediaType())
                .GET();
        if (lastId >= 0) {
            b.header("Last-Event-ID", Long.toString(lastId));
        }
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<InputStream> response = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            response.body().close();
            return response.statusCode();
        }
        connections.add(baseUrl + " from " + resourceVersion);
        body = response.body();
        ended = false;
        Thread t = new Thread(() -> read(response.body()), "watch-" + name);
        t.setDaemon(true);
        reader = t;
        t.start();
        return 200;
    }

    private void read(InputStream in) {
        try {
            switch (encoding) {
                case JSON -> {
                    BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                    String line;
                    while ((line = lines.readLine()) != null) {
                        // A line that does not parse ends the stream as a lost connection does.
                        WatchEvent.Builder frame = WatchEvent.newBuilder();
                        JsonFormat.parser().merge(line, frame);
                        add(frame.build());
                    }
                }
                case SSE -> readSse(new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)));
                case PROTOBUF -> {
                    WatchEvent e;
                    while ((e = WatchEvent.parseDelimitedFrom(in)) != null) {
                        add(e);
                    }
                }
            }
        } catch (IOException e) {
            // The node went away mid-stream: the test resumes elsewhere.
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            ended = true;
        }
    }

    private void readSse(BufferedReader lines) throws IOException {
        StringBuilder block = new StringBuilder();
        String line;
        while ((line = lines.readLine()) != null) {
            if (!line.isEmpty()) {
                block.append(block.length() == 0 ? "" : "\n").append(line);
                continue;
            }
            if (block.toString().startsWith("retry: ")) {
                // The stream's reconnection delay: no event.
                block.setLength(0);
                continue;
            }
            SseEvent e = parseSse(block.toString());
            block.setLength(0);
            synchronized (frames) {
                frames.add(e.frame());
                if (e.id() != null) {
                    lastEventId = Long.parseLong(e.id());
                    framesAtLastId = frames.size();
                }
            }
        }
    }

    private void add(WatchEvent e) {
        synchronized (frames) {
            frames.add(e);
        }
    }

    /**
     * Parses one JSON frame.
     *
     * @param line the frame, with or without its newline
     * @return the frame
     * @throws IllegalArgumentException if it is not a {@code WatchEvent} in JSON
     */
    public static WatchEvent parseJsonLine(String line) {
        WatchEvent.Builder b = WatchEvent.newBuilder();
        try {
            JsonFormat.parser().merge(line, b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a WatchEvent: " + line, e);
        }
        return b.build();
    }

    /**
     * Parses one Server-Sent Events block (its lines, without the blank line that ends it), strictly:
     * an optional {@code id} first, then {@code event} and one {@code data} line whose frame is of the
     * event's type.
     *
     * @param block the block
     * @return its fields and frame
     * @throws IllegalStateException if the block is not such an event
     */
    public static SseEvent parseSse(String block) {
        String id = null;
        String event = null;
        String data = null;
        for (String line : block.split("\n", -1)) {
            if (line.startsWith("id: ")) {
                if (event != null || id != null) {
                    throw new IllegalStateException("id line out of place in " + block);
                }
                id = line.substring(4);
            } else if (line.startsWith("event: ")) {
                event = line.substring(7);
            } else if (line.startsWith("data: ")) {
                if (data != null) {
                    throw new IllegalStateException("two data lines in " + block);
                }
                data = line.substring(6);
            } else {
                throw new IllegalStateException("unexpected line '" + line + "' in " + block);
            }
        }
        if (event == null || data == null) {
            throw new IllegalStateException("no event or data in " + block);
        }
        WatchEvent frame = parseJsonLine(data);
        if (!event.equals(frame.getType().name())) {
            throw new IllegalStateException("event " + event + " but data of type " + frame.getType());
        }
        return new SseEvent(id, event, frame);
    }

    /**
     * Whether the current stream ended.
     *
     * @return true before the first connection and once the stream ended (node gone, timeout, error frame)
     */
    public boolean ended() {
        return ended;
    }

    /**
     * A decoding failure of the reader, if any.
     *
     * @return the failure, or null
     */
    public Throwable failure() {
        return failure;
    }

    /**
     * The frames kept so far.
     *
     * @return a copy, in the order received (frames dropped by {@link #trimToResumePoint} left out)
     */
    public List<WatchEvent> frames() {
        synchronized (frames) {
            return new ArrayList<>(frames);
        }
    }

    /**
     * The streams opened so far.
     *
     * @return {@code "<baseUrl> from <resourceVersion>"} of each
     */
    public synchronized List<String> connections() {
        return List.copyOf(connections);
    }

    /**
     * The newest frame's revision.
     *
     * @return its resourceVersion, or -1 before any frame
     */
    public long lastResourceVersion() {
        synchronized (frames) {
            return frames.isEmpty() ? -1 : frames.get(frames.size() - 1).getResourceVersion();
        }
    }

    /**
     * The newest bookmark's revision.
     *
     * @return its resourceVersion, or -1 before any bookmark
     */
    public long lastBookmark() {
        synchronized (frames) {
            for (int i = frames.size() - 1; i >= 0; i--) {
                if (frames.get(i).getType() == WatchEvent.Type.BOOKMARK) {
                    return frames.get(i).getResourceVersion();
                }
            }
            return -1;
        }
    }

    /**
     * After the stream ended: drops the frames after the resume point and returns the
     * resourceVersion to resume from. After a cut the node sends the dropped revisions again,
     * whole. An SSE watch drops the frames after its last {@code id}, which belong to a revision
     * not received whole (an EventSource app would see them twice).
     *
     * @param initialResourceVersion the revision of the first connection, returned when no frame is kept
     * @return the resourceVersion to resume from (for SSE: the last id, for {@link #reconnectAsEventSource})
     */
    public long trimToResumePoint(long initialResourceVersion) {
        synchronized (frames) {
            if (encoding == Encoding.SSE) {
                frames.subList(framesAtLastId, frames.size()).clear();
                return lastEventId >= 0 ? lastEventId : initialResourceVersion;
            }
            if (resume == Resume.LAST_BOOKMARK) {
                int last = frames.size() - 1;
                while (last >= 0 && frames.get(last).getType() != WatchEvent.Type.BOOKMARK) {
                    last--;
                }
                frames.subList(last + 1, frames.size()).clear();
            } else if (!frames.isEmpty()) {
                WatchEvent last = frames.get(frames.size() - 1);
                boolean complete = last.getType() == WatchEvent.Type.BOOKMARK || last.getIndex() == last.getCount() - 1;
                if (!complete) {
                    long cut = last.getResourceVersion();
                    while (!frames.isEmpty()
                            && frames.get(frames.size() - 1).getResourceVersion() == cut
                            && frames.get(frames.size() - 1).getType() != WatchEvent.Type.BOOKMARK) {
                        frames.remove(frames.size() - 1);
                    }
                }
            }
            return frames.isEmpty()
                    ? initialResourceVersion
                    : frames.get(frames.size() - 1).getResourceVersion();
        }
    }

    /**
     * Waits up to 10 s for the reader thread to finish after the stream ended.
     *
     * @throws InterruptedException if interrupted while waiting
     */
    public void awaitReader() throws InterruptedException {
        Thread t = reader;
        if (t != null) {
            t.join(10_000);
        }
    }

    /** Closes the current stream; its reader ends. */
    @Override
    public void close() {
        InputStream in = body;
        if (in != null) {
            try {
                in.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    @Override
    public String toString() {
        return name + " (" + query + ", " + (encoding == Encoding.PROTOBUF ? "protobuf" : encoding.name()) + ", resume "
                + (encoding == Encoding.SSE ? "last id" : resume) + ")";
    }
}

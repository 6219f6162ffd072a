package io.watchfanout.fanout.watch;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;

/**
 * What a client asked to watch (README.md, "The watch protocol", {@code GET /v1/watch}; etcd's
 * {@code WatchCreateRequest} on the etcd API; a Kubernetes watch), built by name:
 * {@code WatchSpec.of(range, encoding).from(rv).bookmarks(true).build()}.
 *
 * <p>Immutable and thread-safe.
 */
public final class WatchSpec {
    private final KeyRange range;
    private final Encoding encoding;
    private final long resourceVersion;
    private final boolean allowBookmarks;
    private final boolean sendInitialEvents;
    private final boolean noPut;
    private final boolean noDelete;
    private final boolean startBookmark;
    private final Duration progressInterval;
    private final WatchSelector selector;
    private final int index;
    private final String indexValue;
    private final BookmarkFrames bookmarkFrames;
    /** No filter and no selector: every event of the range goes as it happened (the dispatcher's fast case). */
    final boolean plain;

    private WatchSpec(Builder b) {
        this.range = b.range;
        this.encoding = b.encoding;
        this.resourceVersion = b.resourceVersion;
        this.allowBookmarks = b.allowBookmarks;
        this.sendInitialEvents = b.sendInitialEvents;
        this.noPut = b.noPut;
        this.noDelete = b.noDelete;
        this.startBookmark = b.startBookmark;
        this.progressInterval = b.progressInterval;
        this.selector = b.selector;
        this.index = b.index;
        this.indexValue = b.indexValue;
        this.bookmarkFrames = b.bookmarkFrames;
        this.plain = !noPut && !noDelete && selector == null;
    }

    /** A watch of {@code range} in {@code encoding} from the node's current revision, with nothing else asked. */
    public static Builder of(KeyRange range, Encoding encoding) {
        return new Builder(range, encoding);
    }

    /** A builder starting from this spec's values. */
    public Builder toBuilder() {
        Builder b = new Builder(range, encoding);
        b.resourceVersion = resourceVersion;
        b.allowBookmarks = allowBookmarks;
        b.sendInitialEvents = sendInitialEvents;
        b.noPut = noPut;
        b.noDelete = noDelete;
        b.startBookmark = startBookmark;
        b.progressInterval = progressInterval;
        b.selector = selector;
        b.index = index;
        b.indexValue = indexValue;
        b.bookmarkFrames = bookmarkFrames;
        return b;
    }

    /** The keys watched. */
    public KeyRange range() {
        return range;
    }

    /** The frame encoding. */
    public Encoding encoding() {
        return encoding;
    }

    /**
     * 0 = from the node's current revision; N = every event with revision &gt; N (with initial
     * events: the oldest revision the initial state may have).
     */
    public long resourceVersion() {
        return resourceVersion;
    }

    /**
     * Send periodic BOOKMARK frames and one when the stream ends (etcd API: {@code progress_notify}).
     */
    public boolean allowBookmarks() {
        return allowBookmarks;
    }

    /**
     * First an ADDED frame per key in range (and selection), then a BOOKMARK with
     * {@code initial_events_end}, then the events after it.
     */
    public boolean sendInitialEvents() {
        return sendInitialEvents;
    }

    /** Leave PUT events out (etcd's {@code NOPUT} filter). */
    public boolean noPut() {
        return noPut;
    }

    /** Leave DELETE events out (etcd's {@code NODELETE} filter). */
    public boolean noDelete() {
        return noDelete;
    }

    /**
     * First a BOOKMARK at {@link #resourceVersion()}, whatever {@link #allowBookmarks()} says: the
     * revision a {@code sinceTime} resolved to.
     */
    public boolean startBookmark() {
        return startBookmark;
    }

    /**
     * Null for Kubernetes' bookmarks: one every bookmark interval of the node
     * ({@link CoreSettings#bookmarkInterval}); otherwise etcd's progress notifications: one every
     * {@code progressInterval}, only to a watch that was sent no event since the last one.
     */
    public Duration progressInterval() {
        return progressInterval;
    }

    /** Which objects the watcher wants, or null for every object in range. */
    public WatchSelector selector() {
        return selector;
    }

    /**
     * The index the watcher is registered under ({@link io.watchfanout.fanout.frame.ObjectAttributes#indexValue}),
     * or -1: an indexed watcher is visited only by events whose object, before or after, carries
     * {@link #indexValue()} there.
     */
    public int index() {
        return index;
    }

    /** The value of {@link #index()}, or null when the watcher is not indexed. */
    public String indexValue() {
        return indexValue;
    }

    /** The watch's own bookmark frames, or null for its encoding's. */
    public BookmarkFrames bookmarkFrames() {
        return bookmarkFrames;
    }

    /** A BOOKMARK frame for this watch at {@code revision}: its own, or its encoding's (memoized per revision). */
    ByteBuffer bookmark(FrameEncoder encoder, long revision) {
        return bookmarkFrames != null ? bookmarkFrames.bookmark(revision, false) : encoder.bookmark(revision, encoding);
    }

    /** The BOOKMARK that closes this watch's initial events. */
    ByteBuffer initialEventsEnd(FrameEncoder encoder, long revision) {
        return bookmarkFrames != null
                ? bookmarkFrames.bookmark(revision, true)
                : encoder.initialEventsEnd(revision, encoding);
    }

    /** True when the watch has an etcd event-type filter, so that each event must be looked at. */
    boolean filters() {
        return noPut || noDelete;
    }

    /** True when the event-type filters let {@code event} through. */
    boolean accepts(CachedEvent event) {
        return event.isDelete() ? !noDelete : !noPut;
    }

    /** True when dispatching to this watcher reads events' attributes: it selects by them or is indexed. */
    boolean readsAttributes() {
        return selector != null || indexValue != null;
    }

    /**
     * The frame this watcher gets of {@code event}, or null for none: its filters and selector
     * decide, on the object after the event and the one before it ({@code prev_kv}). Without a
     * selector, the event as it happened; with one, an object that matches after and before (or is
     * new) gives the event as it happened, one that enters the selection
     * {@link FrameKind#ENTERED}, one that leaves it {@link FrameKind#LEFT}, and a DELETE is
     * delivered when the deleted object matched.
     */
    FrameKind frameKindFor(CachedEvent event) {
        if ((noPut || noDelete) && !accepts(event)) {
            return null;
        }
        if (selector == null) {
            return FrameKind.EVENT;
        }
        boolean hadPrevious = event.event().hasPrevKv();
        boolean before = hadPrevious && selector.matches(event.prevAttributes());
        if (event.isDelete()) {
            return before ? FrameKind.EVENT : null;
        }
        if (selector.matches(event.attributes())) {
            return before || !hadPrevious ? FrameKind.EVENT : FrameKind.ENTERED;
        }
        return before ? FrameKind.LEFT : null;
    }

    @Override
    public String toString() {
        return range + " (" + encoding + (selector != null ? ", selected" : "")
                + (indexValue != null ? ", index " + index + "=" + indexValue : "") + ")";
    }

    /** Builds a {@link WatchSpec}; not thread-safe. */
    public static final class Builder {
        private final KeyRange range;
        private final Encoding encoding;
        private long resourceVersion;
        private boolean allowBookmarks;
        private boolean sendInitialEvents;
        private boolean noPut;
        private boolean noDelete;
        private boolean startBookmark;
        private Duration progressInterval;
        private WatchSelector selector;
        private int index = -1;
        private String indexValue;
        private BookmarkFrames bookmarkFrames;

        private Builder(KeyRange range, Encoding encoding) {
            this.range = Objects.requireNonNull(range, "range");
            this.encoding = Objects.requireNonNull(encoding, "encoding");
        }

        /**
         * See {@link WatchSpec#resourceVersion()}.
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder from(long resourceVersion) {
            if (resourceVersion < 0) {
                throw new IllegalArgumentException("resourceVersion: " + resourceVersion + " (expected: >= 0)");
            }
            this.resourceVersion = resourceVersion;
            return this;
        }

        /** See {@link WatchSpec#allowBookmarks()}. */
        public Builder bookmarks(boolean allow) {
            this.allowBookmarks = allow;
            return this;
        }

        /** See {@link WatchSpec#sendInitialEvents()}. */
        public Builder initialEvents(boolean send) {
            this.sendInitialEvents = send;
            return this;
        }

        /** See {@link WatchSpec#noPut()}. */
        public Builder noPut(boolean filter) {
            this.noPut = filter;
            return this;
        }

        /** See {@link WatchSpec#noDelete()}. */
        public Builder noDelete(boolean filter) {
            this.noDelete = filter;
            return this;
        }

        /** See {@link WatchSpec#startBookmark()}. */
        public Builder startBookmark(boolean send) {
            this.startBookmark = send;
            return this;
        }

        /** See {@link WatchSpec#progressInterval()}; null for Kubernetes' bookmarks. */
        public Builder progressInterval(Duration interval) {
            this.progressInterval = interval;
            return this;
        }

        /** See {@link WatchSpec#selector()}; null for every object. */
        public Builder selector(WatchSelector selector) {
            this.selector = selector;
            return this;
        }

        /**
         * Registers the watcher under {@code value} of index {@code index} (see
         * {@link WatchSpec#index()}); its selector must accept only objects carrying that value.
         *
         * @throws IllegalArgumentException if {@code index} is negative or {@code value} null
         */
        public Builder indexed(int index, String value) {
            if (index < 0 || value == null) {
                throw new IllegalArgumentException("index " + index + " = " + value + " (expected: >= 0 and a value)");
            }
            this.index = index;
            this.indexValue = value;
            return this;
        }

        /** See {@link WatchSpec#bookmarkFrames()}; null for the encoding's. */
        public Builder bookmarkFrames(BookmarkFrames frames) {
            this.bookmarkFrames = frames;
            return this;
        }

        /** The spec. */
        public WatchSpec build() {
            return new WatchSpec(this);
        }
    }
}

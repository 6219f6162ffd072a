package io.watchfanout.fanout.frame;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A wire encoding of watch frames, registered by the front end that speaks it with a
 * {@link FrameFormat}: the core builds each event's frame once per encoding and shares it with
 * every watcher of that encoding (as kube-apiserver's {@code cachingObject} memoizes per
 * encoder identifier). Each registered encoding gets a small integer {@link #id()}, so that
 * memo slots and counters are arrays indexed by it, with no map on the hot path.
 *
 * <p>The node's own encodings are {@link WatchEventEncodings}'s (the HTTP API's JSON, protobuf
 * and Server-Sent Events) and the etcd API's and the Kubernetes API's, each registered by its
 * front end.
 *
 * <p>Thread-safe; instances are compared by identity.
 */
public final class Encoding {
    /** The most encodings a process registers; ids are in [0, MAX). */
    public static final int MAX = 32;

    private static final List<Encoding> REGISTERED = new ArrayList<>();

    private final int id;
    private final String name;
    private final String mediaType;
    private final FrameFormat format;

    private Encoding(int id, String name, String mediaType, FrameFormat format) {
        this.id = id;
        this.name = name;
        this.mediaType = mediaType;
        this.format = format;
    }

    /**
     * Registers an encoding; call once per encoding, from a static initializer of its front end.
     *
     * @param name a lower-case name unique in the process, e.g. {@code json} (metric labels, logs)
     * @param mediaType the media type its frames are sent as
     * @throws IllegalStateException if the name is taken or {@link #MAX} encodings exist
     */
    public static Encoding register(String name, String mediaType, FrameFormat format) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mediaType, "mediaType");
        Objects.requireNonNull(format, "format");
        synchronized (REGISTERED) {
            for (Encoding e : REGISTERED) {
                if (e.name.equals(name)) {
                    throw new IllegalStateException("encoding " + name + " is registered twice");
                }
            }
            if (REGISTERED.size() == MAX) {
                throw new IllegalStateException("more than " + MAX + " encodings");
            }
            Encoding e = new Encoding(REGISTERED.size(), name, mediaType, format);
            REGISTERED.add(e);
            return e;
        }
    }

    /** Every encoding registered so far, in id order (a copy). */
    public static List<Encoding> all() {
        synchronized (REGISTERED) {
            return List.copyOf(REGISTERED);
        }
    }

    /** The registration id, in [0, {@link #MAX}). */
    public int id() {
        return id;
    }

    /** The encoding's name, e.g. {@code json}. */
    public String name() {
        return name;
    }

    /** The media type of this encoding, e.g. {@code application/json}. */
    public String mediaType() {
        return mediaType;
    }

    /** How its frames are written. */
    public FrameFormat format() {
        return format;
    }

    @Override
    public String toString() {
        return name;
    }
}

package io.watchfanout.fanout.watch;

import java.util.Locale;

/**
 * Why a watch stream's connection was closed before the stream ended: the {@code reason}
 * label of {@code watchfanout_watchers_closed_total} ({@link WatchStats#closed}).
 */
public enum CloseReason {
    /** The client hung up (end-of-stream on the connection's read side). */
    CLIENT_CLOSED,
    /**
     * The kernel reported the connection broken: a reset (a client that exits with bytes unread
     * resets rather than closes), unanswered TCP keepalive probes, or retransmissions given up.
     * The log line at DEBUG names which.
     */
    CONNECTION_ERROR,
    /**
     * Frames were waiting and the client's socket took no byte for the write timeout: the client
     * vanished without a FIN (its packets no longer arrive, so nothing is acknowledged) or stopped
     * reading altogether. A client that reads slowly keeps its stream (it is parked instead).
     */
    WRITE_TIMEOUT,
    /**
     * The socket took the bytes, but the kernel retried them for the write timeout without the
     * client acknowledging any: the client vanished without a FIN while a few bytes were in flight
     * (a quiet watch with bookmarks, whose socket never fills). A live client acknowledges within
     * round trips, however slowly it reads.
     */
    UNACKNOWLEDGED;

    /** The metric label: the name in lower case ({@code write_timeout}). */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}

package io.watchfanout.fanout.transport;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.SameThreadExecutor;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.watch.Opening;
import io.watchfanout.fanout.watch.WakeUps;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSpec;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.xnio.XnioIoThread;

/**
 * The HTTP transport's watch streams, for every front end on the HTTP port: a watch opened through
 * the core's one entry ({@link WatchCore#open}) and streamed on its exchange by a
 * {@link WatchStream} (non-blocking gathered writes on the connection's IO thread, write timeout,
 * stall and hang-up detection, {@code timeoutSeconds}); the front end decides the spec and its
 * encoding, and answers a refusal in its own wire form.
 *
 * <p>Thread-safe.
 */
public final class WatchStreams {
    private final WatchCore core;
    private final HttpSettings settings;
    private final Supplier<UnacknowledgedSweeper> sweeper;
    /** One per IO thread, made on first use. */
    private final Map<XnioIoThread, WakeUps<WatchStream>> wakeUps = new ConcurrentHashMap<>();

    WatchStreams(WatchCore core, HttpSettings settings, Supplier<UnacknowledgedSweeper> sweeper) {
        this.core = core;
        this.settings = settings;
        this.sweeper = sweeper;
    }

    /**
     * Opens {@code spec} (waiting up to the node's {@code --resource-version-wait} for its start
     * revision) and streams it on {@code exchange} with a 200 and {@code contentType}; the grant
     * ends with the stream, and a revoked grant ends it with a 403 ERROR frame. Call from the
     * request's handler, on any thread: the exchange stays open after the handler returns.
     *
     * @param timeoutSeconds the stream's {@code timeoutSeconds}, 0 for none
     * @param grant the watch's admission, or null
     * @param refused gets the core's refusal (not ready, expired, too many reads, timed out) on the
     *     exchange's IO thread, with nothing written yet: the front end answers it in its own form
     */
    public void open(
            HttpServerExchange exchange,
            WatchSpec spec,
            long timeoutSeconds,
            String contentType,
            WatchGrant grant,
            Consumer<Opening> refused) {
        open(exchange, spec, timeoutSeconds, contentType, grant, null, refused);
    }

    /**
     * As {@link #open(HttpServerExchange, WatchSpec, long, String, WatchGrant, Consumer)}, the
     * stream's first bytes {@code preamble} (an event stream's {@code retry:} block), or none when null.
     */
    public void open(
            HttpServerExchange exchange,
            WatchSpec spec,
            long timeoutSeconds,
            String contentType,
            WatchGrant grant,
            ByteBuffer preamble,
            Consumer<Opening> refused) {
        exchange.dispatch(SameThreadExecutor.INSTANCE, () -> {
            WatchStream stream = newStream(exchange);
            core.open(spec, stream, settings.resourceVersionWait(), exchange.getIoThread(), opening -> {
                if (!opening.opened()) {
                    if (grant != null) {
                        grant.end(endReason(opening), 0);
                    }
                    refused.accept(opening);
                    return;
                }
                start(exchange, stream, opening.watch(), grant, timeoutSeconds, contentType, preamble);
            });
        });
    }

    private WatchStream newStream(HttpServerExchange exchange) {
        return new WatchStream(
                exchange,
                wakeUps.computeIfAbsent(exchange.getIoThread(), io -> new WakeUps<>(io, WatchStream::pumpWoken)),
                core.stats(),
                settings.stalledCloseAfter(),
                settings.writeTimeout(),
                settings.nodeId(),
                sweeper.get());
    }

    /** Starts streaming an open watch (IO thread); the grant, when there is one, ends with the stream. */
    private void start(
            HttpServerExchange exchange,
            WatchStream stream,
            Watch watcher,
            WatchGrant grant,
            long timeoutSeconds,
            String contentType,
            ByteBuffer preamble) {
        if (grant != null) {
            boolean[] revoked = new boolean[1];
            stream.onEnd((reason, frames) -> grant.end(revoked[0] ? "forbidden" : reason, frames));
            // On the security thread; the ERROR frame reaches the client as any other ending.
            grant.onRevoked(reason -> exchange.getIoThread().execute(() -> {
                revoked[0] = true;
                watcher.endWithError(HttpStatuses.forbidden(reason));
            }));
        }
        stream.start(watcher, timeoutSeconds, contentType, preamble);
    }

    /** The audit reason a refused opening ends its grant with. */
    private static String endReason(Opening opening) {
        return switch (opening.outcome()) {
            case EXPIRED -> "expired";
            case TOO_MANY_READS -> "too-many-reads";
            case TIMED_OUT -> "timed-out";
            default -> "not-ready";
        };
    }
}

package io.watchfanout.kube.kafka.cli;

import com.google.gson.JsonObject;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.kube.kafka.DecodeResult;
import io.watchfanout.kube.kafka.KubeEventDecoder;
import io.watchfanout.kube.kafka.KubeWatchEvent;
import io.watchfanout.schema.v1.EventsRecord;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.InterruptException;

/**
 * The events of the selected objects from a start offset of the events topic, decoded into
 * Kubernetes watch events: up to the end offsets read at the start, or on and on ({@code --follow})
 * until the thread is interrupted. A value that cannot be decoded is reported on stderr, one line,
 * and the read goes on.
 *
 * <p>Not thread-safe: runs on the calling thread.
 */
final class Tail {
    /** Table rows written at once while catching up, so that a long catch-up keeps little in memory. */
    private static final int ROWS_PER_FLUSH = 500;

    private final EventsTopic events;
    private final KubeEventDecoder decoder;
    private final Selection selection;
    private final Printer printer;
    private final PrintWriter err;

    Tail(EventsTopic events, KubeEventDecoder decoder, Selection selection, Printer printer, PrintWriter err) {
        this.events = events;
        this.decoder = decoder;
        this.selection = selection;
        this.printer = printer;
        this.err = err;
    }

    /**
     * Reads from {@code start}.
     *
     * @param follow whether to go on past the end offsets read at the start
     * @param catchUp the progress line of the read up to those end offsets
     */
    void run(long start, boolean follow, CatchUp catchUp) {
        events.seek(start);
        long end = events.end();
        boolean caughtUp = false;
        int pending = 0;
        try {
            while (follow || events.position() < end) {
                for (ConsumerRecord<byte[], EventsRecord> r : events.poll()) {
                    if (!follow && r.offset() >= end) {
                        break;
                    }
                    if (write(r)) {
                        pending++;
                    }
                }
                long position = events.position();
                if (!caughtUp && position >= end) {
                    caughtUp = true;
                    catchUp.done();
                } else if (!caughtUp) {
                    catchUp.at(position, end);
                }
                if (caughtUp || pending >= ROWS_PER_FLUSH) {
                    printer.flush();
                    pending = 0;
                }
            }
        } catch (InterruptException stopped) {
            // The interrupt is how --follow is told to stop, not a failure: cleared (Kafka sets it again
            // on the exception) so that the consumer closes normally; what was read is written below.
            Thread.interrupted();
        }
        catchUp.done();
        printer.flush();
    }

    /** Writes the record's event if it is of the selected objects; true when it was written. */
    private boolean write(ConsumerRecord<byte[], EventsRecord> r) {
        DecodeResult result = decoder.decode(r.value(), Instant.ofEpochMilli(r.timestamp()));
        if (result instanceof DecodeResult.Undecodable u) {
            if (selected(decoder.resources(), u.key())) {
                report(err, u);
            }
            return false;
        }
        if (!(result instanceof DecodeResult.Decoded d) || !selection.matchesResource(d.event())) {
            return false;
        }
        KubeWatchEvent e = d.event();
        JsonObject tree = !selection.labels().isEverything() || printer.needsTree() ? Printer.tree(e.object()) : null;
        if (tree != null && !selection.matchesLabels(tree)) {
            return false;
        }
        printer.event(e, tree);
        return true;
    }

    /** Says on {@code err}, one line, which value cannot be decoded and why. */
    static void report(PrintWriter err, DecodeResult.Undecodable u) {
        err.println("kube-events: " + u.key() + " at revision " + u.revision() + " cannot be decoded (" + u.reason()
                + "): " + u.message());
        err.flush();
    }

    private boolean selected(KubeResources resources, String key) {
        Optional<KubeResources.ObjectKey> k = resources.parse(key.getBytes(StandardCharsets.UTF_8));
        return k.isPresent()
                && k.get().resource().equals(selection.resource())
                && (selection.namespace() == null
                        || !selection.resource().namespaced()
                        || k.get().namespace().equals(selection.namespace()));
    }
}

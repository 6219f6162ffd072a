package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** A transport a test drives by hand: it reads only when told to (a slow or stalled reader). */
final class TestSink implements WatchSink {
    final AtomicInteger wakeUps = new AtomicInteger();
    final List<WatchEvent> received = new ArrayList<>();
    final List<ByteBuffer> rawFrames = new ArrayList<>();
    Watch watcher;
    boolean ended;

    @Override
    public void wakeUp() {
        wakeUps.incrementAndGet();
    }

    /** Reads up to {@code maxFrames} frames (one poll round, like one write); returns how many. */
    int read(int maxFrames) {
        List<ByteBuffer> out = new ArrayList<>();
        Watch.PollResult r;
        do {
            r = watcher.poll(out, maxFrames);
        } while (r == Watch.PollResult.YIELD);
        if (r == Watch.PollResult.END) {
            ended = true;
            watcher.close();
        }
        for (ByteBuffer f : out) {
            rawFrames.add(f);
            received.add(Frames.decode(f, watcher.spec().encoding()));
        }
        return out.size();
    }

    /** Reads until nothing is waiting. */
    void readAll() {
        while (!ended && read(64) > 0) {
            // keep reading
        }
    }

    List<Long> eventRevisions() {
        List<Long> out = new ArrayList<>();
        for (WatchEvent e : received) {
            if (e.getType() == WatchEvent.Type.ADDED
                    || e.getType() == WatchEvent.Type.MODIFIED
                    || e.getType() == WatchEvent.Type.DELETED) {
                out.add(e.getObject().getModRevision() == 0 ? e.getResourceVersion() : revisionOf(e));
            }
        }
        return out;
    }

    private static long revisionOf(WatchEvent e) {
        // DELETED carries the previous key-value; its resource version (last of its revision) is the deletion.
        return e.getType() == WatchEvent.Type.DELETED
                ? e.getResourceVersion()
                : e.getObject().getModRevision();
    }

    List<WatchEvent> events() {
        List<WatchEvent> out = new ArrayList<>();
        for (WatchEvent e : received) {
            if (e.getType() != WatchEvent.Type.BOOKMARK) {
                out.add(e);
            }
        }
        return out;
    }
}

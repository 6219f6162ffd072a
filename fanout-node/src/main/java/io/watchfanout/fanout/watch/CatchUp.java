package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.AttributeExtractor;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ObjectAttributes;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The read side of a watcher that is not live, run by its transport's pull ({@link Watch#poll}):
 * hands over queued frames, produces the initial events of sendInitialEvents, and catches up from
 * the history window (a bounded scan under the dispatcher's lock, frames built after it) or from
 * older history (the events topic, outside the lock), until the watcher rejoins live dispatch
 * (Kubernetes' {@code cacheWatcher.processInterval}; etcd's unsynced watcher group). A watcher
 * catching up costs the thread that reads it, never the feed thread.
 *
 * <p>Thread-safety: {@link #poll} runs on a watcher's transport thread, never concurrently for
 * one watcher; different watchers poll in parallel.
 */
final class CatchUp {
    /** Steps of one poll before it yields to the transport's other work. */
    private static final int MAX_STEPS_PER_POLL = 8;
    /** History events one catch-up step looks at while holding the lock. */
    private static final int MAX_SCAN_PER_STEP = 4096;

    private final Dispatcher dispatcher;
    private final FrameEncoder encoder;
    private final WatchStats stats;
    private final Expiry expiry;

    CatchUp(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
        this.encoder = dispatcher.encoder();
        this.stats = dispatcher.stats();
        this.expiry = dispatcher.expiry();
    }

    /** See {@link Watch#poll}. */
    Watch.PollResult poll(Watcher w, List<ByteBuffer> out, int maxFrames) {
        for (int step = 0; step < MAX_STEPS_PER_POLL; step++) {
            int n = w.drain(out, maxFrames);
            if (n > 0) {
                // Counted and timed outside the monitor that dispatch takes.
                stats.framesDelivered[w.encoding().id()].add(n);
                long stamp = w.takeDrainedStamp();
                if (stamp > 0) {
                    // The newest live revision goes to the socket now: once per write, not per frame.
                    stats.written.observe(Math.max(0, System.currentTimeMillis() - stamp) / 1000.0);
                }
                return Watch.PollResult.FRAMES;
            }
            Watcher.Phase phase = w.phaseIfEmpty();
            if (phase == null) {
                continue;
            }
            switch (phase) {
                case DONE:
                    return Watch.PollResult.END;
                case LIVE:
                    return Watch.PollResult.IDLE;
                case INITIAL:
                    fillInitial(w);
                    break;
                default:
                    if (step(w)) {
                        // Waiting for older history to be read: the read wakes the sink.
                        return Watch.PollResult.IDLE;
                    }
            }
        }
        return Watch.PollResult.YIELD;
    }

    private void fillInitial(Watcher w) {
        List<ByteBuffer> frames = new ArrayList<>(Math.min(w.capacity(), 64));
        WatchSelector selector = w.spec.selector();
        AttributeExtractor x = dispatcher.extractor();
        int looked = 0;
        while (frames.size() < w.capacity() && looked < MAX_SCAN_PER_STEP && w.initial.hasNext()) {
            StateEntry e = w.initial.next();
            looked++;
            CachedEvent last = e.lastEvent();
            ObjectAttributes attributes = null;
            if (selector != null) {
                // Only a selecting watch reads the objects: from the event's (once per event), or
                // for a key without an event in the window, here.
                if (last != null) {
                    if (x != null) {
                        last.attribute(x);
                    }
                    attributes = last.attributes();
                } else if (x != null) {
                    attributes = x.extract(e.kv());
                }
                if (!selector.matches(attributes)) {
                    continue;
                }
            }
            frames.add(
                    last != null
                            ? last.initialFrame(w.encoding(), encoder)
                            : encoder.initialEvent(e.kv(), attributes, null, w.encoding()));
        }
        boolean last = !w.initial.hasNext();
        ByteBuffer end = last ? w.spec.initialEventsEnd(encoder, w.initialRevision) : null;
        if (w.addInitial(frames, last, end) && end != null) {
            stats.bookmarksSent.increment();
        }
    }

    /**
     * One catch-up step: rejoin live dispatch when the cursor is the cache's revision, else read the
     * next events from history, or end the watcher with 410 Expired.
     *
     * @return true when the watcher waits for a read of older history (its sink is woken)
     */
    private boolean step(Watcher w) {
        OlderHistory older = expiry.older();
        Dispatcher.WindowStep found = dispatcher.nextFromWindow(w, older != null, MAX_SCAN_PER_STEP);
        switch (found.kind()) {
            case OLDER:
                return stepFromOlder(w, older);
            case EXPIRED:
                dispatcher.expire(w);
                return false;
            case READ:
                HistoryRead read = found.read();
                w.closeOlderCursor();
                stats.catchUpFromWindow.add(read.events().size());
                queue(w, read.events(), read.cursor());
                return false;
            case LIVE:
            default:
                return false;
        }
    }

    /**
     * One catch-up step from older history (the events topic), outside the lock.
     *
     * @return true when the watcher waits for the read (its sink is woken when there is more)
     */
    private boolean stepFromOlder(Watcher w, OlderHistory older) {
        OlderHistory.Cursor c = w.olderCursor;
        if (c == null) {
            if (expiry.isBehind(w.cursor())) {
                dispatcher.expire(w);
                return false;
            }
            try {
                c = older.open(w.cursor());
            } catch (TooManyReadsException e) {
                dispatcher.endWithError(w, Statuses.tooManyRequests(e.getMessage()));
                return false;
            }
            w.olderCursor = c;
        }
        OlderHistory.Step step = c.next(w.spec.range(), w.capacity(), MAX_SCAN_PER_STEP, w.sink::wakeUp);
        switch (step.kind()) {
            case EVENTS:
                stats.catchUpFromOlder.add(step.events().size());
                queue(w, step.events(), step.cursor());
                return false;
            case WAIT:
                return true;
            case END:
                w.closeOlderCursor();
                queue(w, List.of(), step.cursor());
                return false;
            case EXPIRED:
                w.closeOlderCursor();
                dispatcher.endWithError(w, expiry.expired(w, step.message()));
                return false;
            case FAILED:
            default:
                w.closeOlderCursor();
                dispatcher.endWithError(w, Statuses.unavailable(step.message()));
                return false;
        }
    }

    /**
     * Queues events read from history (whole revisions, only those the watcher's filters let
     * through). The last frame of each revision is the one that may name a resume point (SSE id).
     */
    private void queue(Watcher w, List<CachedEvent> events, long newCursor) {
        AttributeExtractor x = dispatcher.extractor();
        List<CachedEvent> matched = new ArrayList<>(events.size());
        List<FrameKind> kinds = new ArrayList<>(events.size());
        for (CachedEvent e : events) {
            if (x != null) {
                // Events read from older history (and preloaded ones) get the extractor here; their
                // attributes are computed only if this watcher's selector or a format asks.
                e.attribute(x);
            }
            FrameKind kind = w.spec.frameKindFor(e);
            if (kind != null) {
                matched.add(e);
                kinds.add(kind);
            }
        }
        List<ByteBuffer> frames = new ArrayList<>(matched.size());
        for (int i = 0; i < matched.size(); i++) {
            CachedEvent e = matched.get(i);
            boolean last = i == matched.size() - 1 || matched.get(i + 1).revision() != e.revision();
            frames.add(e.frame(w.encoding(), kinds.get(i), encoder, last));
        }
        w.addCatchUp(frames, newCursor);
    }
}

package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.CachedEvent;
import java.util.List;

/**
 * One step of a watcher's catch-up from the history window.
 *
 * @param events the events after the cursor that match the watcher's range, whole revisions
 *     only, in revision order
 * @param cursor the revision the watcher holds everything up to once it has these events
 * @param reachedEnd true when {@code cursor} is the cache's revision (nothing more to read)
 */
record HistoryRead(List<CachedEvent> events, long cursor, boolean reachedEnd) {}

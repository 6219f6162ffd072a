package io.watchfanout.fanout.watch;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.schema.DigestVerifier;
import io.watchfanout.schema.StateHash;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.StateDigest;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * The fan-out node's copy of the watched etcd range, as Kubernetes' {@code watchCache}:
 * the current state (an ordered map by key, unsigned byte order, for range reads; the loaded
 * values in a {@link ValueArena}, compacted here as updates and deletes empty its chunks) and a
 * {@link HistoryWindow} of recent events for watches that start in the past.
 *
 * <p>Its revision is the newest revision the cache is consistent to: advanced by complete
 * revisions and by progress records, never inside a revision (docs/ARCHITECTURE.md, invariant 2). At revision R
 * the state equals etcd's at R for the watched range (invariant 4).
 *
 * <p>Not thread-safe: the owner ({@code WatchCore}) serializes every call under its lock.
 */
final class WatchCache {
    /**
     * Revisions whose changes the digest check keeps (24 bytes each, allocated as they come): a
     * digest may lie this far behind the cache, the time the ingester's digest read took.
     */
    static final int DIGEST_REVISIONS = 200_000;

    private final TreeMap<ByteString, StateEntry> state = new TreeMap<>(KeyRange.KEY_ORDER);
    private final HistoryWindow history;
    private final LongSupplier clockMillis;
    private long revision;
    private final List<CachedEvent> evicted = new ArrayList<>();
    /** Where the loaded state's values are; values written by events stay in their records. */
    private ValueArena arena = new ValueArena();
    /** The hash of the loaded state, until {@link #startAt} hands it to {@link #digests}. */
    private StateHash loaded = new StateHash();
    /** The hash of the state kept per change of an entry, for etcd's digests ({@link #checkDigest}). */
    private DigestVerifier digests;

    /**
     * @param historyMaxEvents events kept in the history window, {@code >= 1}
     * @param historyMaxAge how long events are kept in the window, {@code > 0}
     * @param clockMillis the clock for history expiry, in milliseconds (tests fake it)
     */
    public WatchCache(int historyMaxEvents, Duration historyMaxAge, LongSupplier clockMillis) {
        this.history = new HistoryWindow(historyMaxEvents, historyMaxAge.toMillis());
        this.clockMillis = clockMillis;
    }

    /** The newest revision the cache is consistent to (0 before anything was loaded). */
    public long revision() {
        return revision;
    }

    /** Watches and reads from a revision older than this get {@link HistoryExpiredException}. */
    public long historyStartRevision() {
        return history.startRevision();
    }

    /** The revision of the oldest event in the history window, 0 when it is empty. */
    public long oldestHistoryRevision() {
        return history.oldestRevision();
    }

    /** Events in the history window. */
    public int historySize() {
        return history.size();
    }

    /** Keys in the current state. */
    public int keyCount() {
        return state.size();
    }

    // ---- rebuild from the state topic -------------------------------------------------

    /**
     * Loads the state topic's snapshot (before {@link #startAt}), replacing the current state;
     * the values are copied into a {@link ValueArena} of the cache's own.
     *
     * @param sortedByKey every live key once, strictly ascending by {@link KeyRange#KEY_ORDER}
     * @throws IllegalArgumentException if the keys are not strictly ascending
     */
    public void loadState(List<KeyValue> sortedByKey) {
        loadState(sortedByKey, new ValueArena());
    }

    /**
     * As {@link #loadState(List)}, the cache adopting {@code values}: the values already stored
     * there stay where they are (the rebuild stores them as it reads), the others are copied into it.
     * The keys come sorted, so the map is built bottom-up in linear time ({@link TreeMap}'s
     * constructor from a sorted map) instead of a million rebalancing inserts.
     *
     * @param sortedByKey every live key once, strictly ascending by {@link KeyRange#KEY_ORDER}
     * @param values the arena the cache keeps its loaded values in from now on
     * @throws IllegalArgumentException if the keys are not strictly ascending
     */
    public void loadState(List<KeyValue> sortedByKey, ValueArena values) {
        for (int i = 1; i < sortedByKey.size(); i++) {
            if (KeyRange.KEY_ORDER.compare(
                            sortedByKey.get(i - 1).getKey(), sortedByKey.get(i).getKey())
                    >= 0) {
                throw new IllegalArgumentException("state keys not strictly ascending at " + i + ": "
                        + KeyRange.printable(sortedByKey.get(i - 1).getKey()) + ", "
                        + KeyRange.printable(sortedByKey.get(i).getKey()));
            }
        }
        state.clear();
        arena = values;
        loaded = new StateHash();
        sortedByKey.forEach(loaded::add);
        state.putAll(new SortedStateView(sortedByKey, values));
        compactArena();
    }

    /** Declares the loaded state to be the state at {@code revision}; history starts after it. */
    public void startAt(long revision) {
        startAt(revision, List.of());
    }

    /**
     * As {@link #startAt(long)}, the history window holding {@code preload}: the revisions before
     * {@code revision} that the state already reflects. The window then starts before the first of
     * them, so that a watch or list from there is served; the window's bounds apply to them as to
     * any events (their age is their records' timestamp).
     *
     * @throws IllegalArgumentException if {@code preload} is not ascending, or holds a revision after
     *     {@code revision}
     */
    public void startAt(long revision, List<PreloadedRevision> preload) {
        long previous = -1;
        for (PreloadedRevision r : preload) {
            if (r.revision() <= previous || r.revision() > revision) {
                throw new IllegalArgumentException("preloaded revision " + r.revision() + " after " + previous
                        + " (expected: ascending, at most the start revision " + revision + ")");
            }
            previous = r.revision();
        }
        this.revision = revision;
        digests = new DigestVerifier(loaded, revision, DIGEST_REVISIONS);
        history.reset(preload.isEmpty() ? revision : preload.get(0).revision() - 1, evicted);
        for (PreloadedRevision r : preload) {
            List<CachedEvent> cached = new ArrayList<>(r.events().size());
            for (Event e : r.events()) {
                cached.add(new CachedEvent(e, r.timestampMillis()));
            }
            history.appendRevision(cached, evicted);
        }
        releaseEvicted();
    }

    // ---- updates from the events topic ------------------------------------------------

    /**
     * Applies the events of one complete revision atomically: state and history change and
     * the revision advances together.
     *
     * @param events all events of one revision, index {@code 0..count-1} in order
     * @return the events as cached, in the same order (their frames are memoized)
     * @throws IllegalArgumentException if the events are not one whole revision after the
     *     cache's revision
     */
    public List<CachedEvent> applyRevision(List<Event> events) {
        if (events.isEmpty()) {
            throw new IllegalArgumentException("a revision has at least one event");
        }
        Event first = events.get(0);
        long rev = first.getRevision();
        if (rev <= revision) {
            throw new IllegalArgumentException(
                    "revision " + rev + " does not advance past the cache's revision " + revision);
        }
        if (first.getCount() != events.size()) {
            throw new IllegalArgumentException(
                    "revision " + rev + " has " + events.size() + " events (expected: " + first.getCount() + ")");
        }
        long now = clockMillis.getAsLong();
        List<CachedEvent> cached = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            Event e = events.get(i);
            if (e.getRevision() != rev || e.getIndex() != i) {
                throw new IllegalArgumentException("event " + e.getIndex() + " at revision " + e.getRevision()
                        + " in revision " + rev + " at position " + i);
            }
            CachedEvent ce = new CachedEvent(e, now);
            cached.add(ce);
            replace(e, ce);
        }
        history.appendRevision(cached, evicted);
        revision = rev;
        releaseEvicted();
        compactArena();
        return cached;
    }

    /** A progress record: every event up to {@code progressRevision} has been applied. */
    public void applyProgress(long progressRevision) {
        if (progressRevision > revision) {
            revision = progressRevision;
        }
    }

    /**
     * Applies a resync: the entries (PUT or DELETE, {@code resync = true}) replace the state
     * of their keys, the cache moves to {@code resyncRevision} and the history window is
     * emptied, so that every watch or read from before it gets {@link HistoryExpiredException}.
     */
    public void applyResync(long resyncRevision, List<Event> entries) {
        for (Event e : entries) {
            replace(e, null);
        }
        revision = Math.max(revision, resyncRevision);
        history.reset(resyncRevision, evicted);
        releaseEvicted();
        compactArena();
    }

    /** The state of {@code e}'s key becomes {@code e}'s; a value it replaces leaves a hole in the arena. */
    private void replace(Event e, CachedEvent cached) {
        boolean delete = e.getType() == Event.Type.DELETE;
        StateEntry old = delete
                ? state.remove(e.getKv().getKey())
                : state.put(e.getKv().getKey(), new StateEntry(e.getKv(), cached));
        // What the cache held, not what the record says it held: the digest proves the cache.
        digests().apply(e.getRevision(), old == null ? null : old.kv(), delete ? null : e.getKv());
        if (old != null && old.lastEvent() == null) {
            arena.release(old.kv().getValue());
        }
    }

    private DigestVerifier digests() {
        if (digests == null) {
            digests = new DigestVerifier(loaded, revision, DIGEST_REVISIONS);
        }
        return digests;
    }

    /**
     * Compares the state, taken back to {@code digest.revision} by the changes of later revisions
     * (up to {@value #DIGEST_REVISIONS} revisions back), with etcd's digest. O(revisions since).
     */
    public DigestVerifier.Verdict checkDigest(StateDigest digest) {
        return digests().check(digest);
    }

    /**
     * Moves the live values of every arena chunk that is less than half live into the chunk being
     * filled, so that the loaded values take at most about twice their bytes however many are replaced
     * or deleted. A chunk holds a few thousand values: a move costs as many lookups and copies.
     */
    private void compactArena() {
        ValueArena.Chunk chunk;
        while ((chunk = arena.nextSparse()) != null) {
            for (ByteString key : chunk.keys()) {
                StateEntry entry = state.get(key);
                if (entry != null
                        && entry.lastEvent() == null
                        && arena.isIn(chunk, entry.kv().getValue())) {
                    ByteString moved = arena.copy(key, entry.kv().getValue());
                    state.put(
                            key,
                            new StateEntry(
                                    entry.kv().toBuilder().setValue(moved).build(), null));
                }
            }
            arena.drop(chunk);
        }
    }

    /** The arena of the loaded values (tests and the memory benchmark look at it). */
    ValueArena arena() {
        return arena;
    }

    /** Evicts the history older than the maximum age; call periodically. */
    void expireHistory() {
        history.expire(clockMillis.getAsLong(), evicted);
        releaseEvicted();
    }

    /**
     * Evicted events drop their frames, and the state stops pointing at them, so that frames
     * live only within the window.
     */
    private void releaseEvicted() {
        if (evicted.isEmpty()) {
            return;
        }
        for (CachedEvent e : evicted) {
            e.release();
            StateEntry entry = state.get(e.key());
            if (entry != null && entry.lastEvent() == e) {
                state.put(e.key(), new StateEntry(entry.kv(), null));
            }
        }
        evicted.clear();
    }

    // ---- reads ------------------------------------------------------------------------

    /** The key-values in {@code range} at the cache's revision, in key order. */
    public List<StateEntry> snapshot(KeyRange range) {
        if (range.isSingleKey()) {
            StateEntry e = state.get(range.start());
            return e == null ? List.of() : List.of(e);
        }
        return new ArrayList<>(subMap(range, range.start()).values());
    }

    private NavigableMap<ByteString, StateEntry> subMap(KeyRange range, ByteString from) {
        return range.end() == null ? state.tailMap(from, true) : state.subMap(from, true, range.end(), false);
    }

    /**
     * One page of the key-values in {@code range} as they were at {@code atRevision}: the
     * current state with the history window's events after {@code atRevision} undone (their
     * {@code prev_kv}), so that every page of a paged list is consistent at one revision.
     *
     * @param from the first key of the page (inclusive), within the range
     * @param atRevision {@code <=} {@link #revision()}
     * @param limit the most key-values on the page, {@code >= 1}
     * @throws HistoryExpiredException if {@code atRevision} is older than the history window
     */
    public ListPage list(KeyRange range, ByteString from, long atRevision, int limit) throws HistoryExpiredException {
        return list(range, from, atRevision, limit, false);
    }

    /**
     * As {@link #list(KeyRange, ByteString, long, int)}; with {@code countRemaining} the page's
     * {@link ListPage#remaining()} is the number of key-values after it at {@code atRevision}
     * (Kubernetes' {@code remainingItemCount}). Counting walks the rest of the range once (no
     * copies), so a paged list counts on its first page only and carries the count on.
     *
     * @throws HistoryExpiredException if {@code atRevision} is older than the history window
     */
    public ListPage list(KeyRange range, ByteString from, long atRevision, int limit, boolean countRemaining)
            throws HistoryExpiredException {
        if (atRevision > revision) {
            throw new IllegalArgumentException("revision " + atRevision + " is ahead of the cache at " + revision);
        }
        if (atRevision < history.startRevision()) {
            throw Expiry.tooOld(atRevision, history.startRevision());
        }
        if (range.isAfterEnd(from) || KeyRange.KEY_ORDER.compare(from, range.start()) < 0) {
            return new ListPage(List.of(), atRevision, null, countRemaining ? 0 : -1);
        }
        // key -> state at atRevision (null value = absent), for keys changed after it.
        TreeMap<ByteString, KeyValue> undo = new TreeMap<>(KeyRange.KEY_ORDER);
        Map<ByteString, Boolean> seen = new HashMap<>();
        for (int i = history.firstAfter(atRevision); i < history.size(); i++) {
            Event e = history.get(i).event();
            ByteString key = e.getKv().getKey();
            if (range.contains(key)
                    && KeyRange.KEY_ORDER.compare(key, from) >= 0
                    && seen.putIfAbsent(key, Boolean.TRUE) == null) {
                undo.put(key, e.hasPrevKv() ? e.getPrevKv() : null);
            }
        }
        Iterator<Map.Entry<ByteString, StateEntry>> current = range.isSingleKey()
                ? (state.containsKey(from)
                        ? Map.of(from, state.get(from)).entrySet().iterator()
                        : Collections.emptyIterator())
                : subMap(range, from).entrySet().iterator();
        Iterator<Map.Entry<ByteString, KeyValue>> changed = undo.entrySet().iterator();
        Map.Entry<ByteString, StateEntry> c = current.hasNext() ? current.next() : null;
        Map.Entry<ByteString, KeyValue> u = changed.hasNext() ? changed.next() : null;
        List<KeyValue> out = new ArrayList<>(Math.min(limit, 1024));
        List<CachedEvent> lastEvents = new ArrayList<>(Math.min(limit, 1024));
        ByteString nextKey = null;
        long remaining = 0;
        while (c != null || u != null) {
            int cmp = c == null ? 1 : u == null ? -1 : KeyRange.KEY_ORDER.compare(c.getKey(), u.getKey());
            KeyValue kv;
            ByteString key;
            CachedEvent lastEvent = null;
            if (cmp < 0) {
                key = c.getKey();
                kv = c.getValue().kv();
                lastEvent = c.getValue().lastEvent();
                c = current.hasNext() ? current.next() : null;
            } else {
                key = u.getKey();
                kv = u.getValue();
                u = changed.hasNext() ? changed.next() : null;
                if (cmp == 0) {
                    c = current.hasNext() ? current.next() : null;
                }
            }
            if (kv == null) {
                continue;
            }
            if (nextKey != null) {
                remaining++;
            } else if (out.size() == limit) {
                if (!countRemaining) {
                    return new ListPage(out, atRevision, key, -1, lastEvents);
                }
                nextKey = key;
                remaining = 1;
            } else {
                out.add(kv);
                lastEvents.add(lastEvent);
            }
        }
        return new ListPage(out, atRevision, nextKey, countRemaining ? remaining : -1, lastEvents);
    }

    /**
     * Reads the events after {@code cursor} that match {@code range}, whole revisions at a time,
     * until {@code maxEvents} matched or {@code maxScan} events were looked at.
     *
     * @throws HistoryExpiredException if events after {@code cursor} have left the window
     */
    HistoryRead readHistory(long cursor, KeyRange range, int maxEvents, int maxScan) throws HistoryExpiredException {
        if (cursor < history.startRevision()) {
            throw Expiry.tooOld(cursor, history.startRevision());
        }
        List<CachedEvent> out = new ArrayList<>();
        int scanned = 0;
        int i = history.firstAfter(cursor);
        long readTo = cursor;
        while (i < history.size()) {
            long rev = history.get(i).revision();
            while (i < history.size() && history.get(i).revision() == rev) {
                CachedEvent e = history.get(i);
                if (range.contains(e.key())) {
                    out.add(e);
                }
                i++;
                scanned++;
            }
            readTo = rev;
            if (out.size() >= maxEvents || scanned >= maxScan) {
                boolean end = i >= history.size() && rev == revision;
                return new HistoryRead(out, readTo, end);
            }
        }
        return new HistoryRead(out, Math.max(readTo, revision), true);
    }

    /**
     * The sorted snapshot as the {@link SortedMap} that {@link TreeMap#putAll} builds from in
     * linear time (it asks only for the size, the comparator and the entries in order).
     */
    private static final class SortedStateView extends AbstractMap<ByteString, StateEntry>
            implements SortedMap<ByteString, StateEntry> {
        private final List<KeyValue> sorted;
        private final ValueArena values;

        SortedStateView(List<KeyValue> sorted, ValueArena values) {
            this.sorted = sorted;
            this.values = values;
        }

        @Override
        public Comparator<? super ByteString> comparator() {
            return KeyRange.KEY_ORDER;
        }

        @Override
        public Set<Map.Entry<ByteString, StateEntry>> entrySet() {
            return new AbstractSet<>() {
                @Override
                public int size() {
                    return sorted.size();
                }

                @Override
                public Iterator<Map.Entry<ByteString, StateEntry>> iterator() {
                    Iterator<KeyValue> it = sorted.iterator();
                    return new Iterator<>() {
                        @Override
                        public boolean hasNext() {
                            return it.hasNext();
                        }

                        @Override
                        public Map.Entry<ByteString, StateEntry> next() {
                            KeyValue kv = it.next();
                            if (!kv.getValue().isEmpty() && !values.holds(kv.getValue())) {
                                // The key too gets an array of its own: a parsed key may be a view of
                                // its whole record, which it would keep alive.
                                ByteString key = UnsafeByteOperations.unsafeWrap(
                                        kv.getKey().toByteArray());
                                kv = kv.toBuilder()
                                        .setKey(key)
                                        .setValue(values.copy(key, kv.getValue()))
                                        .build();
                            }
                            return new AbstractMap.SimpleImmutableEntry<>(kv.getKey(), new StateEntry(kv, null));
                        }
                    };
                }
            };
        }

        @Override
        public SortedMap<ByteString, StateEntry> subMap(ByteString fromKey, ByteString toKey) {
            throw new UnsupportedOperationException();
        }

        @Override
        public SortedMap<ByteString, StateEntry> headMap(ByteString toKey) {
            throw new UnsupportedOperationException();
        }

        @Override
        public SortedMap<ByteString, StateEntry> tailMap(ByteString fromKey) {
            throw new UnsupportedOperationException();
        }

        @Override
        public ByteString firstKey() {
            return sorted.get(0).getKey();
        }

        @Override
        public ByteString lastKey() {
            return sorted.get(sorted.size() - 1).getKey();
        }
    }
}

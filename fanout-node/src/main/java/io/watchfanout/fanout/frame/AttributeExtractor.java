package io.watchfanout.fanout.frame;

import io.watchfanout.schema.v1.KeyValue;

/**
 * A front end's reading of stored objects into {@link ObjectAttributes}, registered with the
 * watch core: the core calls it at most once per event for the new value and for the previous
 * one (an event's {@code prev_kv}), and only when something needs them: on the feed thread before
 * dispatch while a watcher selects by attributes or is indexed, else on first need (a watcher
 * with a selector catching up later, a format asking {@link CachedEvent#attributes()}); and per
 * key for the initial events of a watch with a selector, for keys without an event in the
 * history window. With no such watcher it is not called at all. Must be pure and thread-safe, and must not throw for a value it cannot
 * read: it returns attributes that match nothing (or null) instead, and the front end's encodings
 * report the undecodable object.
 */
public interface AttributeExtractor {
    /**
     * The attributes of {@code kv}, or null when the front end has none for it (a key it does not
     * serve).
     */
    ObjectAttributes extract(KeyValue kv);

    /** How many indexes the attributes carry values for ({@link ObjectAttributes#indexValue}); at most 8. */
    int indexCount();
}

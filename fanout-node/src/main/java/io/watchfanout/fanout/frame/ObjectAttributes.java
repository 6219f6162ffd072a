package io.watchfanout.fanout.frame;

/**
 * What a front end knows of one stored object that its selectors and the core's indexes look
 * at (kube-apiserver keeps them as {@code ObjLabels}/{@code ObjFields} on each
 * {@code watchCacheEvent}): computed once per event by the front end's {@link AttributeExtractor}
 * and shared by every watcher, so that a selector is evaluated without decoding the value per
 * watcher. Implementations are immutable and thread-safe; a front end adds what its selectors
 * need (labels, fields) beside the index values.
 */
public interface ObjectAttributes {
    /**
     * The object's value under index {@code index}, e.g. its namespace or {@code spec.nodeName}.
     *
     * @param index in [0, {@link AttributeExtractor#indexCount()})
     * @return the value, or null when the object has none (it is then in no watcher's bucket of
     *     that index)
     */
    String indexValue(int index);
}

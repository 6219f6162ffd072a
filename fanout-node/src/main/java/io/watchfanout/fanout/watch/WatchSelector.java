package io.watchfanout.fanout.watch;

import io.watchfanout.fanout.frame.ObjectAttributes;

/**
 * Which objects a watcher wants, decided from the attributes its front end's extractor computed
 * once per event (kube-apiserver's {@code SelectionPredicate} over {@code ObjLabels} and
 * {@code ObjFields}). The core evaluates it on the object after an event and on the object before
 * it: an object that enters the selection reaches the watcher as ADDED, one that leaves it as
 * DELETED ({@link io.watchfanout.fanout.frame.FrameKind#ENTERED},
 * {@link io.watchfanout.fanout.frame.FrameKind#LEFT}).
 *
 * <p>Called on the feed thread and on transport threads, per event and watcher: must be cheap,
 * pure, thread-safe and must not throw.
 */
@FunctionalInterface
public interface WatchSelector {
    /**
     * @param attributes the object's attributes, or null when its front end has none for it
     * @return true when the watcher wants the object
     */
    boolean matches(ObjectAttributes attributes);
}

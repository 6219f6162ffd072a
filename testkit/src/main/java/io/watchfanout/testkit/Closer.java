package io.watchfanout.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * What a test opened (processes, clients, streams), closed newest first: a test keeps each
 * resource as it opens it and closes the lot in {@code @AfterEach}, so that a failing test stops
 * its processes too. (Not an {@code AutoCloseable} itself: it is closed by {@code @AfterEach}.) A failure to close one does not keep the others open: the first is thrown,
 * the rest are added to it as suppressed. Not thread-safe: the test's thread only.
 */
public final class Closer {
    private final List<AutoCloseable> opened = new ArrayList<>();

    /** Keeps {@code resource} to be closed by {@link #close()}; returns it. */
    public <T extends AutoCloseable> T keep(T resource) {
        opened.add(resource);
        return resource;
    }

    /** Closes every kept resource, newest first, and forgets them. */
    public void close() throws Exception {
        Exception first = null;
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        opened.clear();
        if (first != null) {
            throw first;
        }
    }
}

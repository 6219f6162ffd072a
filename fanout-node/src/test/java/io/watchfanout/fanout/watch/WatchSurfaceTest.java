package io.watchfanout.fanout.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The core's public surface is the list its package documentation gives: a type made public for
 * one front end's convenience shows here, and goes either into that list (with a reason) or back
 * to package-private machinery.
 */
class WatchSurfaceTest {
    private static final Set<String> SURFACE = Set.of(
            // a front end's entry
            "WatchCore",
            "Opening",
            "Arrival",
            "WatchSpec",
            "WatchSelector",
            "BookmarkFrames",
            "Watch",
            "WatchSink",
            "WakeUps",
            "CloseReason",
            // reads
            "ListPage",
            "StateEntry",
            "CurrentRevision",
            "HistoryExpiredException",
            // state for probes and metrics
            "Readiness",
            "NodeStatus",
            "WatchStats",
            "Statuses",
            "CoreSettings",
            // the feed side
            "CacheFeed",
            "PreloadedRevision",
            "ValueArena",
            "OlderHistory",
            "TooManyReadsException");

    @Test
    void onlyTheDocumentedTypesArePublic() throws Exception {
        Set<String> publicTypes = new TreeSet<>();
        for (String name : topLevelTypes()) {
            Class<?> type = Class.forName("io.watchfanout.fanout.watch." + name);
            if (Modifier.isPublic(type.getModifiers())) {
                publicTypes.add(name);
            }
        }
        assertThat(publicTypes).containsExactlyInAnyOrderElementsOf(SURFACE);
    }

    @Test
    void thePackageDocumentationNamesEachOfThem() throws IOException {
        String doc = Files.readString(sources().resolve("package-info.java"));
        for (String name : SURFACE) {
            assertThat(doc).as(name).contains("io.watchfanout.fanout.watch." + name + "}");
        }
    }

    private static Set<String> topLevelTypes() throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.list(sources())) {
            files.map(f -> f.getFileName().toString())
                    .filter(f -> f.endsWith(".java") && !f.equals("package-info.java"))
                    .forEach(f -> names.add(f.substring(0, f.length() - ".java".length())));
        }
        return names;
    }

    private static Path sources() {
        return Path.of("src/main/java/io/watchfanout/fanout/watch");
    }
}

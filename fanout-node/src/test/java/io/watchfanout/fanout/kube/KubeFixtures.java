package io.watchfanout.fanout.kube;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The Kubernetes serializer fixtures in {@code ../shared/k8s-testdata} beside the repository. */
final class KubeFixtures {
    private KubeFixtures() {}

    static Path directory() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("shared").resolve("k8s-testdata");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException(
                "no shared/k8s-testdata in any parent of " + Path.of("").toAbsolutePath());
    }

    /** Fixture names without extension, e.g. {@code core.v1.Pod}. */
    static List<String> names() {
        try (Stream<Path> files = Files.list(directory())) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".pb"))
                    .map(n -> n.substring(0, n.length() - 3))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] protobuf(String name) {
        return read(name + ".pb");
    }

    static String json(String name) {
        return new String(read(name + ".json"), StandardCharsets.UTF_8);
    }

    private static byte[] read(String file) {
        try {
            return Files.readAllBytes(directory().resolve(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

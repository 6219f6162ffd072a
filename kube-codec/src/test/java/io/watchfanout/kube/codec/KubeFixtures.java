package io.watchfanout.kube.codec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * kube-apiserver's serializer fixtures (the {@code testdata/HEAD} objects of the Kubernetes API
 * repositories: one object of each kind with every field filled, as {@code .pb} and {@code .json})
 * in a {@code shared/k8s-testdata} directory beside the repository, found in the working
 * directory or any parent. Only tests marked {@link RequiresKubeFixtures} use them; every other
 * test makes its objects itself ({@link StoredObjects}).
 */
public final class KubeFixtures {
    private KubeFixtures() {}

    /** The fixture directory, if one lies in the working directory or a parent of it. */
    static Optional<Path> find() {
        for (Path dir = start(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("shared").resolve("k8s-testdata");
            if (Files.isDirectory(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** Why the fixtures are missing: the skip reason of a {@link RequiresKubeFixtures} test. */
    static String absence() {
        return "no shared/k8s-testdata beside the repository: none in " + start() + " or any parent";
    }

    private static Path start() {
        return Path.of("").toAbsolutePath();
    }

    private static Path directory() {
        // A test that reads fixtures without the mark fails here rather than passing by accident.
        return find().orElseThrow(() -> new IllegalStateException(absence() + " (is the test @RequiresKubeFixtures?)"));
    }

    /** Fixture names without extension, e.g. {@code core.v1.Pod}. */
    public static List<String> names() {
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

    public static byte[] protobuf(String name) {
        return read(name + ".pb");
    }

    public static String json(String name) {
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

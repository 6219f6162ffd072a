package io.watchfanout.kube.codec;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/** The Kubernetes serializer fixtures in {@code ../shared/k8s-testdata} beside the repository. */
public final class KubeFixtures {
    private KubeFixtures() {}

    public static Path directory() {
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

    /** The object of a protobuf envelope, decoded with the schema (for checking what the node wrote). */
    public static DynamicMessage decode(byte[] envelope) throws InvalidProtocolBufferException {
        StoredObject object = StoredObject.of(envelope, 0, envelope.length);
        Descriptor type = KubeSchema.standard()
                .type(object.apiVersion(), object.kind())
                .or(() -> KubeSchema.standard().message("k8s.io.apimachinery.pkg.apis.meta.v1." + object.kind()))
                .orElseThrow(() -> new AssertionError("no schema for " + object.apiVersion() + " " + object.kind()));
        return DynamicMessage.parseFrom(
                type, Arrays.copyOfRange(envelope, object.rawOffset(), object.rawOffset() + object.rawLength()));
    }

    /** {@code metadata.resourceVersion} of a decoded object or list. */
    public static String resourceVersion(DynamicMessage object) {
        DynamicMessage meta =
                (DynamicMessage) object.getField(object.getDescriptorForType().findFieldByName("metadata"));
        return (String) meta.getField(meta.getDescriptorForType().findFieldByName("resourceVersion"));
    }
}

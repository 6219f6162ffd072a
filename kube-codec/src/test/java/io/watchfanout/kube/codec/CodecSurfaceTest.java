package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The codec's public surface is the list each package's documentation gives: a type made public
 * for one user's convenience shows here, and goes either into that list (with a reason) or back
 * to package-private machinery.
 */
class CodecSurfaceTest {
    private static final Map<String, Set<String>> SURFACE = Map.of(
            "",
            Set.of(
                    // stored objects
                    "StoredObject",
                    "StoredBytes",
                    "AtRest",
                    "ProtoReader",
                    "UndecodableObjectException",
                    // the schema and JSON
                    "KubeSchema",
                    "ProtoJsonWriter",
                    "ResourceVersionSplice",
                    "ObjectFields",
                    "JsonFields",
                    // wire forms
                    "KubeWatchFrames",
                    "KubeListWriter",
                    "PartialObjectMetadata",
                    // custom resources
                    "CustomResources"),
            "resources",
            Set.of("KubeResource", "KubeResources"),
            "select",
            Set.of("LabelSelector", "FieldSelector", "SelectorException"),
            "table",
            Set.of("KubeTable", "HumanDuration"),
            "atrest",
            Set.of("EncryptionConfiguration", "StorageDecryption"));

    @Test
    void onlyTheDocumentedTypesArePublic() throws Exception {
        for (Map.Entry<String, Set<String>> p : SURFACE.entrySet()) {
            Set<String> publicTypes = new TreeSet<>();
            for (String name : topLevelTypes(p.getKey())) {
                Class<?> type = Class.forName(packageName(p.getKey()) + "." + name);
                if (Modifier.isPublic(type.getModifiers())) {
                    publicTypes.add(name);
                }
            }
            assertThat(publicTypes).as(packageName(p.getKey())).containsExactlyInAnyOrderElementsOf(p.getValue());
        }
    }

    @Test
    void eachPackageDocumentationNamesItsTypes() throws IOException {
        for (Map.Entry<String, Set<String>> p : SURFACE.entrySet()) {
            String doc = Files.readString(sources(p.getKey()).resolve("package-info.java"));
            for (String name : p.getValue()) {
                assertThat(doc).as(name).contains(packageName(p.getKey()) + "." + name + "}");
            }
        }
    }

    private static String packageName(String sub) {
        return sub.isEmpty() ? "io.watchfanout.kube.codec" : "io.watchfanout.kube.codec." + sub;
    }

    private static Set<String> topLevelTypes(String sub) throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.list(sources(sub))) {
            files.map(f -> f.getFileName().toString())
                    .filter(f -> f.endsWith(".java") && !f.equals("package-info.java"))
                    .forEach(f -> names.add(f.substring(0, f.length() - ".java".length())));
        }
        return names;
    }

    private static Path sources(String sub) {
        Path root = Path.of("src/main/java/io/watchfanout/kube/codec");
        return sub.isEmpty() ? root : root.resolve(sub);
    }
}

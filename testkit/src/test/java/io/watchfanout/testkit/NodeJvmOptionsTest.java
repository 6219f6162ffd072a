package io.watchfanout.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The JVM options the tests, {@code bin/local-stack} and {@code bin/bench} give a fan-out node are
 * the ones its image gives it: the figures measured with one hold for the other.
 */
class NodeJvmOptionsTest {
    @Test
    void theLauncherGivesANodeTheOptionsOfItsImage() throws IOException {
        Path dockerfile = repository().resolve("deploy/docker/fanout-node.Dockerfile");
        String options = Files.readAllLines(dockerfile).stream()
                .map(String::trim)
                .filter(l -> l.startsWith("JAVA_TOOL_OPTIONS="))
                .findFirst()
                .orElseThrow()
                .replaceAll("^JAVA_TOOL_OPTIONS=\"([^\"]*)\".*$", "$1");
        List<String> image = Arrays.asList(options.split("\\s+"));
        // The image adds the container's heap sizing and its exit on OutOfMemoryError.
        assertThat(image)
                .containsAll(StackLauncher.NODE_JVM_OPTIONS)
                .hasSize(StackLauncher.NODE_JVM_OPTIONS.size() + 2);
    }

    private static Path repository() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("deploy/docker")) && Files.exists(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository above " + Path.of("").toAbsolutePath());
    }
}

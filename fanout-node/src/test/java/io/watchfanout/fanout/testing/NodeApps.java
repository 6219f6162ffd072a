package io.watchfanout.fanout.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Node.js programs of the tests ({@code src/test/node/<name>}: a real client such as the npm
 * {@code etcd3} package, or the Chromium driver): copied into {@code target/<name>} and installed
 * with {@code npm ci} from their pinned lock file, once per build.
 */
public final class NodeApps {
    private NodeApps() {}

    /**
     * Copies {@code files} of {@code src/test/node/<name>} into {@code target/<name>} and runs
     * {@code npm ci} there unless {@code node_modules/<module>} is there already.
     *
     * @return the installed program's directory
     * @throws IllegalStateException if npm fails or takes more than 5 minutes (with its output)
     */
    public static Path install(String name, String module, List<String> files)
            throws IOException, InterruptedException {
        Path source = Path.of("src", "test", "node", name).toAbsolutePath();
        Path app = Path.of("target", name).toAbsolutePath();
        Files.createDirectories(app);
        for (String f : files) {
            Files.copy(source.resolve(f), app.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        if (!Files.isDirectory(app.resolve("node_modules").resolve(module))) {
            Process npm = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
                    .directory(app.toFile())
                    .redirectErrorStream(true)
                    .start();
            String log = new String(npm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!npm.waitFor(5, TimeUnit.MINUTES) || npm.exitValue() != 0) {
                npm.destroyForcibly();
                throw new IllegalStateException("npm ci in " + app + " failed: " + log);
            }
        }
        return app;
    }
}

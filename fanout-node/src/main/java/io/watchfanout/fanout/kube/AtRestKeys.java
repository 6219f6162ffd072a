package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.security.EncryptionFile;
import io.watchfanout.kube.codec.AtRest;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's {@code --encryption-provider-config}, handed to the codec's {@link AtRest} and
 * handed again whenever the file changes (key rotation), so that every value the Kubernetes API
 * reads is opened with the file's latest good keys.
 */
final class AtRestKeys {
    private static final Logger LOG = LoggerFactory.getLogger(AtRestKeys.class);
    /** How often the file is looked at. */
    private static final long RELOAD_MILLIS = 1000;

    private AtRestKeys() {}

    /**
     * Opens encrypted values with the keys of {@code file} from now on, and reads it again about
     * once a second on a daemon thread ({@code watchfanout-kube-encryption-<node>}) when it changed;
     * a changed file that cannot be used is logged once and the previous keys stay.
     *
     * @return stops the reloading
     */
    static AutoCloseable start(EncryptionFile file, KubeResources resources, String nodeId) {
        AtRest.use(file.decryption(), resources);
        ScheduledExecutorService reloader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "watchfanout-kube-encryption-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        String[] lastError = {null};
        reloader.scheduleWithFixedDelay(
                () -> {
                    try {
                        if (file.reload()) {
                            AtRest.use(file.decryption(), resources);
                            LOG.info("[node {}] --encryption-provider-config {} reloaded", nodeId, file.path());
                        }
                        lastError[0] = null;
                    } catch (IOException | RuntimeException e) {
                        String message = String.valueOf(e.getMessage());
                        if (!message.equals(lastError[0])) {
                            lastError[0] = message;
                            LOG.warn(
                                    "[node {}] cannot reload --encryption-provider-config, keeping the previous keys: {}",
                                    nodeId,
                                    message);
                        }
                    }
                },
                RELOAD_MILLIS,
                RELOAD_MILLIS,
                TimeUnit.MILLISECONDS);
        LOG.info(
                "[node {}] encrypted values are opened with the keys of --encryption-provider-config {}",
                nodeId,
                file.path());
        return reloader::shutdownNow;
    }
}

package io.watchfanout.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension giving tests one real etcd per test JVM, shared by every test class that
 * uses it: the first use starts an {@link EtcdServer} with default settings (progress notify
 * interval 1 s); it is kept in the root {@link ExtensionContext.Store} and closed when the JUnit
 * engine finishes (a JVM shutdown hook kills it in any case).
 *
 * <pre>{@code
 * @ExtendWith(EtcdExtension.class)
 * class IngesterIT {
 *     @Test
 *     void publishesEveryRevision(EtcdServer etcd) { ... etcd.clientUrl() ... }
 * }
 * }</pre>
 *
 * <p>{@link EtcdServer} parameters of constructors, {@code @BeforeAll}/{@code @BeforeEach}
 * methods and test methods are resolved to the shared server. Since it is shared, a test must
 * keep to its own key prefix (e.g. from {@link TopicPrefixes#unique}) and must not compact etcd
 * or change its settings.
 *
 * <p><b>A test that kills, stops or restarts the shared server must leave it running</b> (call
 * {@link EtcdServer#restart()} in a {@code finally} block). As a safety net this extension
 * restarts it (same data, same ports, with a warning) before the next test class or test method
 * if it finds it dead. Destructive tests that would disturb other tests use a private server:
 * {@code try (EtcdServer etcd = EtcdServer.builder().build().start()) { ... }}.
 *
 */
public final class EtcdExtension extends SharedServerExtension<EtcdServer> {

    /** Creates the extension; JUnit calls this for {@code @ExtendWith(EtcdExtension.class)}. */
    public EtcdExtension() {
        super(EtcdServer.class, () -> new EtcdServer().start(), EtcdServer::isAlive, EtcdServer::restart);
    }

    /**
     * Returns the test JVM's shared server, starting it on first use and restarting it if a
     * test left it dead.
     *
     * @param context any extension context of the running test plan
     * @return the running shared server
     * @throws IllegalStateException if the server cannot be started (see {@link EtcdServer#start()})
     */
    public static EtcdServer shared(ExtensionContext context) {
        return new EtcdExtension().server(context);
    }
}

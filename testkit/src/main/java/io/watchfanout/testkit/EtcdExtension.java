package io.watchfanout.testkit;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>Thread-safe: with parallel test execution the server is still started once.
 */
public final class EtcdExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(EtcdExtension.class);

    /** Creates the extension; JUnit calls this for {@code @ExtendWith(EtcdExtension.class)}. */
    public EtcdExtension() {}

    /**
     * Returns the test JVM's shared etcd, starting it on first use and restarting it if a test
     * left it dead.
     *
     * @param context any extension context of the running test plan
     * @return the running shared server
     * @throws IllegalStateException if etcd cannot be started (see {@link EtcdServer#start()})
     */
    public static EtcdServer shared(ExtensionContext context) {
        EtcdServer server = context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(SharedEtcd.class, k -> new SharedEtcd(new EtcdServer().start()), SharedEtcd.class)
                .server;
        synchronized (server) {
            if (!server.isAlive()) {
                LOG.warn("shared etcd {} was left dead by an earlier test; restarting it", server.clientUrl());
                server.restart();
            }
        }
        return server;
    }

    /** Starts (or revives) the shared server before the class's first test. */
    @Override
    public void beforeAll(ExtensionContext context) {
        shared(context);
    }

    /** Revives the shared server if an earlier test left it dead. */
    @Override
    public void beforeEach(ExtensionContext context) {
        shared(context);
    }

    /** Supports parameters of type {@link EtcdServer}. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == EtcdServer.class;
    }

    /** Resolves an {@link EtcdServer} parameter to the shared server. */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return shared(extensionContext);
    }

    /** Store entry that closes the server when the root context closes. */
    private static final class SharedEtcd implements ExtensionContext.Store.CloseableResource {
        final EtcdServer server;

        SharedEtcd(EtcdServer server) {
            this.server = server;
        }

        @Override
        public void close() {
            server.close();
        }
    }
}

package io.watchfanout.testkit;

import io.etcd.jetcd.Client;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;

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
 * <p>Two more parameter types spare a test class its own set-up. A jetcd {@link Client} is a
 * client of the shared server (inbound messages up to {@value #CLIENT_MAX_INBOUND_BYTES} bytes,
 * for large range reads), one per test method (or per class, for a constructor or
 * {@code @BeforeAll} parameter), closed after the method's {@code @AfterEach} methods. A
 * {@link TestPrefix} is the test's unique topic and key prefix. A test method and its
 * {@code @BeforeEach} methods get the same instance of each:
 * <pre>{@code
 * @BeforeEach
 * void setUp(Client client, TestPrefix prefix) {
 *     etcd = client;
 *     keyPrefix = prefix.keyPrefix();
 * }
 * }</pre>
 *
 * <p><b>A test that kills, stops or restarts the shared server must leave it running</b> (call
 * {@link EtcdServer#restart()} in a {@code finally} block). As a safety net this extension
 * restarts it (same data, same ports, with a warning) before the next test class or test method
 * if it finds it dead. Destructive tests that would disturb other tests use a private server:
 * {@code try (EtcdServer etcd = EtcdServer.builder().build().start()) { ... }}.
 *
 */
public final class EtcdExtension extends SharedServerExtension<EtcdServer> {
    /** The largest message an injected {@link Client} accepts: 64 MiB. */
    public static final int CLIENT_MAX_INBOUND_BYTES = 64 << 20;

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(EtcdExtension.class);

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

    /** Supports {@link EtcdServer}, jetcd {@link Client} and {@link TestPrefix} parameters. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == Client.class
                || type == TestPrefix.class
                || super.supportsParameter(parameterContext, extensionContext);
    }

    /** Resolves the shared server, the context's client of it, or the context's {@link TestPrefix}. */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        ExtensionContext.Store store = extensionContext.getStore(NAMESPACE);
        if (type == TestPrefix.class) {
            return store.getOrComputeIfAbsent(
                    TestPrefix.class, k -> TestPrefix.unique(extensionContext), TestPrefix.class);
        }
        if (type == Client.class) {
            EtcdServer etcd = server(extensionContext);
            return store.getOrComputeIfAbsent(
                            Client.class,
                            k -> new ClosedWithContext(Client.builder()
                                    .endpoints(etcd.clientUrl())
                                    .maxInboundMessageSize(CLIENT_MAX_INBOUND_BYTES)
                                    .build()),
                            ClosedWithContext.class)
                    .client;
        }
        return super.resolveParameter(parameterContext, extensionContext);
    }

    /** Store entry that closes a client when its extension context closes. */
    private record ClosedWithContext(Client client) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() {
            client.close();
        }
    }
}

package io.watchfanout.testkit;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JUnit 5 extension giving tests one real Kafka broker (single-node KRaft) per test JVM, shared
 * by every test class that uses it: the first use starts a {@link KafkaBroker} with default
 * settings; it is kept in the root {@link ExtensionContext.Store} and closed when the JUnit engine
 * finishes (a JVM shutdown hook kills it in any case).
 *
 * <pre>{@code
 * @ExtendWith(KafkaExtension.class)
 * class FanoutNodeIT {
 *     @Test
 *     void rebuildsCache(KafkaBroker kafka, TestInfo info) {
 *         String prefix = TopicPrefixes.unique(info);
 *         ... kafka.bootstrapServers() ...
 *     }
 * }
 * }</pre>
 *
 * <p>{@link KafkaBroker} parameters of constructors, {@code @BeforeAll}/{@code @BeforeEach}
 * methods and test methods are resolved to the shared broker. Since it is shared, a test must
 * keep to its own topics and transactional ids (prefix them with {@link TopicPrefixes#unique})
 * and must not change broker settings.
 *
 * <p><b>A test that kills, stops or restarts the shared broker must leave it running</b> (call
 * {@link KafkaBroker#restart()} or {@link KafkaBroker#start()} in a {@code finally} block). As a
 * safety net this extension restarts it (same data, same ports, with a warning) before the next
 * test class or test method if it finds it dead. Destructive tests that would disturb other tests
 * use a private broker: {@code try (KafkaBroker kafka = KafkaBroker.builder().build().start()) { ... }}.
 *
 * <p>Thread-safe: with parallel test execution the broker is still started once.
 */
public final class KafkaExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final Logger LOG = LoggerFactory.getLogger(KafkaExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(KafkaExtension.class);

    /** Creates the extension; JUnit calls this for {@code @ExtendWith(KafkaExtension.class)}. */
    public KafkaExtension() {}

    /**
     * Returns the test JVM's shared Kafka broker, starting it on first use and restarting it if
     * a test left it dead.
     *
     * @param context any extension context of the running test plan
     * @return the running shared server
     * @throws IllegalStateException if the broker cannot be started (see {@link KafkaBroker#start()})
     */
    public static KafkaBroker shared(ExtensionContext context) {
        KafkaBroker server = context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(SharedKafka.class, k -> new SharedKafka(new KafkaBroker().start()), SharedKafka.class)
                .server;
        synchronized (server) {
            if (!server.isAlive()) {
                LOG.warn("shared Kafka broker {} was left dead by an earlier test; restarting it", server.bootstrapServers());
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

    /** Supports parameters of type {@link KafkaBroker}. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == KafkaBroker.class;
    }

    /** Resolves an {@link KafkaBroker} parameter to the shared server. */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return shared(extensionContext);
    }

    /** Store entry that closes the server when the root context closes. */
    private static final class SharedKafka implements ExtensionContext.Store.CloseableResource {
        final KafkaBroker server;

        SharedKafka(KafkaBroker server) {
            this.server = server;
        }

        @Override
        public void close() {
            server.close();
        }
    }
}

package io.watchfanout.testkit;

import org.junit.jupiter.api.extension.ExtensionContext;

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
public final class KafkaExtension extends SharedServerExtension<KafkaBroker> {

    /** Creates the extension; JUnit calls this for {@code @ExtendWith(KafkaExtension.class)}. */
    public KafkaExtension() {
        super(KafkaBroker.class, () -> new KafkaBroker().start(), KafkaBroker::isAlive, KafkaBroker::restart);
    }

    /**
     * Returns the test JVM's shared server, starting it on first use and restarting it if a
     * test left it dead.
     *
     * @param context any extension context of the running test plan
     * @return the running shared server
     * @throws IllegalStateException if the server cannot be started (see {@link KafkaBroker#start()})
     */
    public static KafkaBroker shared(ExtensionContext context) {
        return new KafkaExtension().server(context);
    }
}

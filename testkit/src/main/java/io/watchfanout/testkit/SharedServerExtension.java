package io.watchfanout.testkit;

import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link EtcdExtension} and {@link KafkaExtension} share: one server per test JVM, kept in
 * the root {@link ExtensionContext.Store} (closed when the JUnit engine finishes), started on
 * first use, revived before each test class and method if an earlier test left it dead, and
 * injected into parameters of its type.
 *
 * <p>Thread-safe: with parallel test execution the server is still started once.
 *
 * @param <S> the server type
 */
abstract class SharedServerExtension<S extends AutoCloseable>
        implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    private static final Logger LOG = LoggerFactory.getLogger(SharedServerExtension.class);

    private final Class<S> type;
    private final Supplier<S> start;
    private final Predicate<S> alive;
    private final Consumer<S> restart;

    /**
     * @param type the server type, the key of the shared instance and of parameter resolution
     * @param start starts a new server with default settings
     * @param alive whether the server's process runs
     * @param restart restarts the server on the same data and ports
     */
    SharedServerExtension(Class<S> type, Supplier<S> start, Predicate<S> alive, Consumer<S> restart) {
        this.type = type;
        this.start = start;
        this.alive = alive;
        this.restart = restart;
    }

    /** The test JVM's shared server, started on first use and restarted if a test left it dead. */
    final S server(ExtensionContext context) {
        ExtensionContext.Namespace namespace = ExtensionContext.Namespace.create(SharedServerExtension.class, type);
        @SuppressWarnings("unchecked")
        Shared<S> entry = context.getRoot()
                .getStore(namespace)
                .getOrComputeIfAbsent(type, k -> new Shared<>(start.get()), Shared.class);
        S server = entry.server;
        synchronized (server) {
            if (!alive.test(server)) {
                LOG.warn("shared {} was left dead by an earlier test; restarting it", server);
                restart.accept(server);
            }
        }
        return server;
    }

    /** Starts (or revives) the shared server before the class's first test. */
    @Override
    public void beforeAll(ExtensionContext context) {
        server(context);
    }

    /** Revives the shared server if an earlier test left it dead. */
    @Override
    public void beforeEach(ExtensionContext context) {
        server(context);
    }

    /** Supports parameters of the server's type. */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return parameterContext.getParameter().getType() == type;
    }

    /** Resolves a parameter of the server's type to the shared server. */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return server(extensionContext);
    }

    /** Store entry that closes the server when the root context closes. */
    private static final class Shared<S extends AutoCloseable> implements ExtensionContext.Store.CloseableResource {
        final S server;

        Shared(S server) {
            this.server = server;
        }

        @Override
        public void close() throws Exception {
            server.close();
        }
    }
}

package io.watchfanout.testkit;

import java.util.Objects;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The names of one test's data on the shared servers: its topic prefix (from
 * {@link TopicPrefixes#unique(TestInfo)}; the test's topics are {@code <topicPrefix>.events} and
 * {@code <topicPrefix>.state}) and its etcd key prefix {@code "/<topicPrefix>/"}. A parameter of
 * this type is resolved by {@link EtcdExtension}: the same instance for a test method and its
 * {@code @BeforeEach} methods.
 *
 * <p>Immutable and thread-safe.
 *
 * @param topicPrefix the test's topic prefix, {@code [a-z0-9-]} only
 * @param keyPrefix the test's etcd keys: {@code "/" + topicPrefix + "/"}
 */
public record TestPrefix(String topicPrefix, String keyPrefix) {
    /**
     * @throws NullPointerException if a prefix is null
     */
    public TestPrefix {
        Objects.requireNonNull(topicPrefix, "topicPrefix");
        Objects.requireNonNull(keyPrefix, "keyPrefix");
    }

    /**
     * A new, unique prefix for a test.
     *
     * @param info JUnit's {@link TestInfo} of the test
     * @return a prefix named after the test's class and method; different on every call
     */
    public static TestPrefix unique(TestInfo info) {
        String topicPrefix = TopicPrefixes.unique(info);
        return of(topicPrefix);
    }

    /** A prefix for the test of an extension context. */
    static TestPrefix unique(ExtensionContext context) {
        return of(TopicPrefixes.unique(context.getTestClass(), context.getTestMethod(), context.getDisplayName()));
    }

    private static TestPrefix of(String topicPrefix) {
        return new TestPrefix(topicPrefix, "/" + topicPrefix + "/");
    }
}

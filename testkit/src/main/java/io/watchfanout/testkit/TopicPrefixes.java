package io.watchfanout.testkit;

import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.TestInfo;

/**
 * Unique, readable name prefixes, so that tests sharing one Kafka broker (or one etcd) never
 * see each other's topics (or keys): a test uses {@code prefix + ".events"} and
 * {@code prefix + ".state"}, and may use {@code "/" + prefix + "/"} as its etcd key prefix.
 *
 * <p>A prefix is the test name lower-cased, with every run of characters other than
 * {@code [a-z0-9]} replaced by one {@code -}, cut to 60 characters, then {@code -}, a number
 * counting prefixes in this JVM and 4 random base-36 characters (so that JVMs sharing a broker
 * do not collide). It holds only {@code [a-z0-9-]}: legal in Kafka topic names and free of
 * {@code .}/{@code _}, which Kafka treats as colliding in metric names.
 *
 * <p>Thread-safe.
 */
public final class TopicPrefixes {
    private static final int MAX_NAME_CHARS = 60;
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private TopicPrefixes() {}

    /**
     * Returns a new prefix derived from {@code testName}.
     *
     * @param testName any text naming the test, e.g. {@code "IngesterIT#crashRecovery"}
     * @return e.g. {@code ingesterit-crashrecovery-3-k2x9}; different on every call
     */
    public static String unique(String testName) {
        String name =
                testName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        if (name.length() > MAX_NAME_CHARS) {
            name = name.substring(0, MAX_NAME_CHARS).replaceAll("-+$", "");
        }
        if (name.isEmpty()) {
            name = "test";
        }
        String random = Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36 * 36, 36 * 36 * 36 * 36), 36);
        return name + "-" + COUNTER.incrementAndGet() + "-" + random;
    }

    /**
     * Returns a new prefix derived from the test class's simple name and the test method's name.
     *
     * @param testInfo JUnit's injected {@link TestInfo}
     * @return e.g. {@code kafkabrokertest-transactions-1-a0zz}; different on every call
     */
    public static String unique(TestInfo testInfo) {
        return unique(testInfo.getTestClass(), testInfo.getTestMethod(), testInfo.getDisplayName());
    }

    /** As {@link #unique(TestInfo)}, from what an extension knows of the test. */
    static String unique(Optional<Class<?>> testClass, Optional<Method> testMethod, String displayName) {
        String className = testClass.map(Class::getSimpleName).orElse("");
        String methodName = testMethod.map(Method::getName).orElse(displayName);
        return unique(className + "-" + methodName);
    }
}

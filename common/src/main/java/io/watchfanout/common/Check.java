package io.watchfanout.common;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * What values a {@link Flag} takes beyond what its converter parses: a range such as
 * {@code >= 1}, {@code 0..65535, or -1 for none}, {@code whole seconds, 1s..32767s}. The same
 * text is the flag's "expected" in {@code --help}, in README.md's flag tables and in the usage
 * message of a value outside it ({@code --history-max-events: 0 (expected: >= 1)}).
 *
 * <p>Immutable and thread-safe when {@code test} is.
 *
 * @param expected what a valid value is, e.g. {@code >= 1}; empty for a check whose failures
 *     explain themselves ({@link #by})
 * @param test true for a valid value; may instead throw {@link IllegalArgumentException} whose
 *     message says what is wrong and what was expected
 * @param <T> the value's type
 */
public record Check<T>(String expected, Predicate<? super T> test) {
    /** Validates the fields. */
    public Check {
        Objects.requireNonNull(expected, "expected");
        Objects.requireNonNull(test, "test");
    }

    /**
     * A check of its own words.
     *
     * @param expected what a valid value is, e.g. {@code -1 or >= 1}
     * @param test true for a valid value
     */
    public static <T> Check<T> of(String expected, Predicate<? super T> test) {
        return new Check<>(expected, test);
    }

    /**
     * A check by a parser of the domain that explains its own failures (e.g. the CORS origins).
     *
     * @param validator throws {@link IllegalArgumentException} naming the bad value and what was
     *     expected
     */
    public static <T> Check<T> by(Consumer<? super T> validator) {
        return new Check<>("", value -> {
            validator.accept(value);
            return true;
        });
    }

    /** A whole number {@code >= min}. */
    public static Check<Integer> atLeast(int min) {
        return of(">= " + min, v -> v >= min);
    }

    /** A whole number in {@code min..max}. */
    public static Check<Integer> between(int min, int max) {
        return of(min + ".." + max, v -> v >= min && v <= max);
    }

    /** A duration of at least {@code min}, e.g. {@code >= 1ms}. */
    public static Check<Duration> atLeast(Duration min) {
        return of(">= " + DurationConverter.format(min), v -> v.compareTo(min) >= 0);
    }

    /** A duration longer than zero. */
    public static Check<Duration> positive() {
        return of("> 0", v -> !v.isZero() && !v.isNegative());
    }

    /** A duration of whole seconds in {@code min..max} seconds (what socket options take). */
    public static Check<Duration> wholeSeconds(long min, long max) {
        return of(
                "whole seconds, " + min + "s.." + max + "s",
                v -> v.getNano() == 0 && v.getSeconds() >= min && v.getSeconds() <= max);
    }

    /** Text that is not blank. */
    public static Check<String> notBlank(String expected) {
        return of(expected, v -> !v.isBlank());
    }
}

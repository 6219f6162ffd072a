package io.watchfanout.common;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import picocli.CommandLine.ITypeConverter;

/**
 * One command-line flag of a runnable, defined once: its name, parameter label, default, unit,
 * what values it takes ({@link Check}) and help text. A {@link FlagTable} of them makes the
 * runnable's picocli options, hence {@code --help} and the {@code WATCHFANOUT_<FLAG_NAME>}
 * variables ({@link EnvironmentDefaults}), and checks the parsed values; README.md's flag
 * tables repeat {@code --help} and a test compares the two.
 *
 * <p>Built with {@link Builder}, e.g.
 * {@code Flag.integer("--history-max-events", "N").defaultValue("100000").unit("events")
 * .check(Check.atLeast(1)).help("Events kept in the history window for resumes.")}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param <T> the type of the parsed value
 */
public final class Flag<T> {
    private final String name;
    private final String paramLabel;
    private final Class<?> type;
    private final Class<?> elementType;
    private final ITypeConverter<?> converter;
    private final String defaultValue;
    private final String defaultText;
    private final boolean required;
    private final boolean hidden;
    private final Arity arity;
    private final String unit;
    private final Check<? super T> check;
    private final String help;
    private final T absent;

    /** How a flag takes its value. */
    enum Arity {
        /** {@code --flag VALUE}. */
        VALUE,
        /** {@code --flag} or {@code --no-flag}. */
        NEGATABLE,
        /** {@code --flag}, {@code --flag=true}, {@code --flag=false}. */
        OPTIONAL_VALUE
    }

    private Flag(Builder<T> b, String help) {
        this.name = b.name;
        this.paramLabel = b.paramLabel;
        this.type = b.type;
        this.elementType = b.elementType;
        this.converter = b.converter;
        this.defaultValue = b.defaultValue;
        this.defaultText = b.defaultText;
        this.required = b.required;
        this.hidden = b.hidden;
        this.arity = b.arity;
        this.unit = b.unit;
        this.check = b.check;
        this.help = Objects.requireNonNull(help, "help");
        this.absent = b.absent;
    }

    /** A flag taking text, e.g. a topic prefix. */
    public static Builder<String> text(String name, String paramLabel) {
        return new Builder<String>(name, paramLabel, String.class, null).unit("text");
    }

    /** A flag taking a whole number, in {@code int}'s range. */
    public static Builder<Integer> integer(String name, String paramLabel) {
        return new Builder<>(name, paramLabel, Integer.class, new IntegerConverter());
    }

    /** A flag taking a duration ({@link DurationConverter}: {@code 500ms}, {@code 5s}, {@code 10m}). */
    public static Builder<Duration> duration(String name) {
        return new Builder<Duration>(name, "DURATION", Duration.class, new DurationConverter()).unit("duration");
    }

    /** A flag taking a size in bytes ({@link ByteSizeConverter}: {@code 8MiB}). */
    public static Builder<Integer> byteSize(String name) {
        return new Builder<Integer>(name, "SIZE", Integer.class, new ByteSizeConverter()).unit("bytes");
    }

    /** A flag taking a file or directory. */
    public static Builder<Path> path(String name, String paramLabel) {
        return new Builder<Path>(name, paramLabel, Path.class, null).unit("path");
    }

    /**
     * A flag taking anything a converter parses.
     *
     * @param converter throws picocli's {@code TypeConversionException} naming the value and the
     *     expected form
     */
    public static <T> Builder<T> of(String name, String paramLabel, Class<T> type, ITypeConverter<T> converter) {
        return new Builder<>(name, paramLabel, type, converter);
    }

    /** A flag taking comma-separated values, each parsed by {@code converter} (null: as is); empty when not set. */
    public static Builder<List<String>> list(String name, String paramLabel, ITypeConverter<String> converter) {
        Builder<List<String>> b = new Builder<>(name, paramLabel, List.class, converter);
        b.elementType = String.class;
        b.absent = List.of();
        return b;
    }

    /** A flag taking comma-separated whole numbers, e.g. ports; empty when not set. */
    public static Builder<List<Integer>> integers(String name, String paramLabel) {
        Builder<List<Integer>> b = new Builder<>(name, paramLabel, List.class, new IntegerConverter());
        b.elementType = Integer.class;
        b.absent = List.of();
        return b;
    }

    /** An on/off flag: {@code --name} or {@code --no-name}. */
    public static Builder<Boolean> toggle(String name) {
        Builder<Boolean> b = new Builder<>(name, "", boolean.class, null);
        b.arity = Arity.NEGATABLE;
        return b.unit("flag (`--x` / `--no-x`)");
    }

    /** An on/off flag with an optional value: {@code --name}, {@code --name=false}. */
    public static Builder<Boolean> optionalBoolean(String name) {
        Builder<Boolean> b = new Builder<>(name, "BOOL", boolean.class, null);
        b.arity = Arity.OPTIONAL_VALUE;
        return b;
    }

    /** The long name, e.g. {@code --kafka-bootstrap}. */
    public String name() {
        return name;
    }

    /** The label of the value in {@code --help}, e.g. {@code DURATION}; empty for a toggle. */
    public String paramLabel() {
        return paramLabel;
    }

    Class<?> type() {
        return type;
    }

    /** The type of a list's elements, or null for a flag with one value. */
    Class<?> elementType() {
        return elementType;
    }

    /** The converter, or null for picocli's own of {@link #type()}. */
    ITypeConverter<?> converter() {
        return converter;
    }

    /** The default as written on the command line, or null when there is none or it is computed. */
    public String defaultValue() {
        return defaultValue;
    }

    /** A computed default in words, e.g. {@code <hostname>-<port>}, or null. */
    public String defaultText() {
        return defaultText;
    }

    /** Whether the flag (or its environment variable) must be given. */
    public boolean required() {
        return required;
    }

    /** Whether {@code --help} leaves it out (benchmark switches). */
    public boolean hidden() {
        return hidden;
    }

    Arity arity() {
        return arity;
    }

    /** The unit in Markdown, e.g. {@code events} or {@code `host:port`, comma-separated}; {@code --help} drops the backticks. */
    public String unit() {
        return unit;
    }

    /** The check of a parsed value, or null for none. */
    public Check<? super T> check() {
        return check;
    }

    /** The help text, a sentence (or several) ending with a full stop. */
    public String help() {
        return help;
    }

    /** The value when the flag is not given and has no default: null, or an empty list. */
    T absent() {
        return absent;
    }

    @Override
    public String toString() {
        return name;
    }

    /**
     * Collects a flag's parts; {@link #help} builds it. Not thread-safe: one per flag definition.
     *
     * @param <T> the type of the parsed value
     */
    public static final class Builder<T> {
        private final String name;
        private final String paramLabel;
        private final Class<?> type;
        private final ITypeConverter<?> converter;
        private Class<?> elementType;
        private String defaultValue;
        private String defaultText;
        private boolean required;
        private boolean hidden;
        private Arity arity = Arity.VALUE;
        private String unit = "";
        private Check<? super T> check;
        private T absent;

        private Builder(String name, String paramLabel, Class<?> type, ITypeConverter<?> converter) {
            if (!name.startsWith("--")) {
                throw new IllegalArgumentException("flag name " + name + " (expected: --name)");
            }
            this.name = name;
            this.paramLabel = Objects.requireNonNull(paramLabel, "paramLabel");
            this.type = type;
            this.converter = converter;
        }

        /** The default, as it would be written on the command line, e.g. {@code 5s}. */
        public Builder<T> defaultValue(String value) {
            this.defaultValue = Objects.requireNonNull(value, "value");
            return this;
        }

        /** A default computed at run time, in words for {@code --help} and the README, e.g. {@code <hostname>-<port>}. */
        public Builder<T> defaultText(String text) {
            this.defaultText = Objects.requireNonNull(text, "text");
            return this;
        }

        /** The flag or its environment variable must be given. */
        public Builder<T> required() {
            this.required = true;
            return this;
        }

        /** Left out of {@code --help} and the README (benchmark switches). */
        public Builder<T> hidden() {
            this.hidden = true;
            return this;
        }

        /** The unit in Markdown, e.g. {@code events}, {@code TCP port}. */
        public Builder<T> unit(String text) {
            this.unit = Objects.requireNonNull(text, "text");
            return this;
        }

        /** What values the flag takes beyond what its converter parses. */
        public Builder<T> check(Check<? super T> c) {
            this.check = Objects.requireNonNull(c, "check");
            return this;
        }

        /**
         * Builds the flag.
         *
         * @param text the help text, ending with a full stop; without the default, the unit and
         *     the check, which {@code --help} adds
         */
        public Flag<T> help(String text) {
            return new Flag<>(this, text);
        }
    }
}

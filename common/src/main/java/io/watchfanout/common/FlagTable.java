package io.watchfanout.common;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The flags of one runnable, in {@code --help}'s order: the single definition of each flag's
 * name, default, unit, range and help. A subclass lists them and names itself as its command's
 * {@code @Command(modelTransformer = ...)}, so that every picocli command line of the runnable
 * gets the options; {@link #values} then checks what was parsed.
 *
 * <p>Each option's help is the flag's help text, then a line
 * {@code Unit: <unit>, <expected> (default: <default>).} ({@link DefaultStyle}), which is what
 * README.md's flag tables show in their unit and default columns.
 *
 * <p>Immutable and thread-safe.
 */
public class FlagTable implements CommandLine.IModelTransformer {
    /** The line of an option's help that holds its unit, range and default starts with this. */
    public static final String UNIT_LINE = "Unit: ";

    /** How {@code --help} writes a default. */
    public enum DefaultStyle {
        /** {@code Unit: events, >= 1 (default: 100000).} */
        PARENTHESES,
        /** {@code Unit: events, >= 1. Default: 100000.} */
        SENTENCE
    }

    private final DefaultStyle style;
    private final List<Flag<?>> flags;

    /**
     * @param style how {@code --help} writes defaults
     * @param flags the flags in {@code --help}'s order
     * @throws IllegalArgumentException when two flags have the same name
     */
    protected FlagTable(DefaultStyle style, Flag<?>... flags) {
        this.style = style;
        this.flags = List.of(flags);
        Set<String> names = new HashSet<>();
        for (Flag<?> f : this.flags) {
            if (!names.add(f.name())) {
                throw new IllegalArgumentException("flag " + f.name() + " is defined twice");
            }
        }
    }

    /** The flags, in {@code --help}'s order. */
    public final List<Flag<?>> flags() {
        return flags;
    }

    /** Adds an option for every flag to {@code spec} (picocli calls this once per command line). */
    @Override
    public final CommandSpec transform(CommandSpec spec) {
        for (Flag<?> f : flags) {
            spec.addOption(option(f));
        }
        return spec;
    }

    private OptionSpec option(Flag<?> f) {
        OptionSpec.Builder b =
                OptionSpec.builder(f.name()).description(description(f)).hidden(f.hidden());
        switch (f.arity()) {
            case NEGATABLE:
                // No default for picocli: with one, its --x sets the opposite of the default and --no-x the
                // default itself (so --x would turn a flag that is on by default off). Without one, --x is
                // true and --no-x false; values() applies the environment and the default when neither is given.
                b.type(boolean.class).negatable(true).arity("0");
                break;
            case OPTIONAL_VALUE:
                b.type(boolean.class).arity("0..1").fallbackValue("true").paramLabel(f.paramLabel());
                break;
            default:
                b.type(f.type()).paramLabel(f.paramLabel());
                if (f.elementType() != null) {
                    b.auxiliaryTypes(f.elementType()).splitRegex(",");
                }
        }
        if (f.converter() != null) {
            b.converters(f.converter());
        }
        if (f.defaultValue() != null && f.arity() != Flag.Arity.NEGATABLE) {
            b.defaultValue(f.defaultValue());
        }
        return b.build();
    }

    private String[] description(Flag<?> f) {
        List<String> parts = new ArrayList<>();
        if (!f.unit().isEmpty()) {
            parts.add(f.unit().replace("`", ""));
        }
        if (f.check() != null && !f.check().expected().isEmpty()) {
            parts.add(f.check().expected());
        }
        String line = parts.isEmpty() ? "" : UNIT_LINE + String.join(", ", parts);
        String defaults = f.defaultValue() == null
                ? f.defaultText()
                : f.arity() == Flag.Arity.NEGATABLE ? f.defaultValue() : "${DEFAULT-VALUE}";
        if (f.required()) {
            line = (line.isEmpty() ? "" : line + " ") + "(required)";
        } else if (defaults != null && style == DefaultStyle.PARENTHESES) {
            line = (line.isEmpty() ? "" : line + " ") + "(default: " + defaults + ")";
        } else if (defaults != null) {
            line = (line.isEmpty() ? "" : line + ". ") + "Default: " + defaults;
        }
        return line.isEmpty() ? new String[] {escape(f.help())} : new String[] {escape(f.help()), escape(line) + "."};
    }

    /** picocli formats help text with {@link String#format}: a literal {@code %} is {@code %%}. */
    private static String escape(String text) {
        return text.replace("%", "%%");
    }

    /**
     * Reads and checks the flags that {@code spec} parsed: every required one is there (on the
     * command line or in its environment variable) and every value passes its check.
     *
     * @throws CommandLine.ParameterException naming the missing flags with their variables, or the
     *     flag, its value and what was expected; picocli prints it as a one-line usage error and
     *     exits with status 2
     */
    public final Values values(CommandSpec spec) {
        Map<Flag<?>, Object> values = new IdentityHashMap<>();
        List<String> missing = new ArrayList<>();
        for (Flag<?> f : flags) {
            Object value = f.arity() == Flag.Arity.NEGATABLE
                    ? toggle(spec, f)
                    : spec.findOption(f.name()).getValue();
            if (value == null && f.required()) {
                missing.add(f.name());
            }
            values.put(f, value != null ? value : f.absent());
        }
        if (!missing.isEmpty()) {
            List<String> variables =
                    missing.stream().map(EnvironmentDefaults::variableFor).toList();
            String s = missing.size() == 1 ? "" : "s";
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "Missing required option" + s + " " + String.join(", ", missing) + " (or environment variable" + s
                            + " " + String.join(", ", variables) + ")");
        }
        for (Flag<?> f : flags) {
            Object value = values.get(f);
            if (value != null && f.check() != null) {
                String failure = failure(f, value);
                if (failure != null) {
                    throw new CommandLine.ParameterException(spec.commandLine(), failure);
                }
            }
        }
        return new Values(values);
    }

    /**
     * A toggle's value: {@code --x} or {@code --no-x} on the command line (the last one given),
     * else its environment variable ({@code true} or {@code false}), else its default.
     */
    private static Boolean toggle(CommandSpec spec, Flag<?> f) {
        CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
        if (parsed != null && parsed.hasMatchedOption(f.name())) {
            return (Boolean) spec.findOption(f.name()).getValue();
        }
        if (spec.defaultValueProvider() instanceof EnvironmentDefaults env) {
            String text = env.variable(f.name());
            if (text != null) {
                String variable = EnvironmentDefaults.variableFor(f.name());
                return switch (text.trim().toLowerCase(Locale.ROOT)) {
                    case "true" -> Boolean.TRUE;
                    case "false" -> Boolean.FALSE;
                    default ->
                        throw new CommandLine.ParameterException(
                                spec.commandLine(),
                                variable + " (" + f.name() + "): '" + text + "' (expected: true or false)");
                };
            }
        }
        return f.defaultValue() == null ? Boolean.FALSE : Boolean.valueOf(f.defaultValue());
    }

    @SuppressWarnings("unchecked")
    private static <T> String failure(Flag<T> f, Object value) {
        try {
            if (f.check().test().test((T) value)) {
                return null;
            }
            return f.name() + ": " + show(value) + " (expected: " + f.check().expected() + ")";
        } catch (IllegalArgumentException e) {
            String message = String.valueOf(e.getMessage());
            return message.startsWith(f.name() + ":") ? message : f.name() + ": " + message;
        }
    }

    /** A value the way the flag takes it: durations as {@code 5s}, not {@code PT5S}; text in quotes. */
    private static String show(Object value) {
        if (value instanceof Duration d) {
            return DurationConverter.format(d);
        }
        if (value instanceof String s) {
            return "'" + s + "'";
        }
        return String.valueOf(value);
    }

    /** The checked values of one parse. Immutable and thread-safe. */
    public static final class Values {
        private final Map<Flag<?>, Object> values;

        private Values(Map<Flag<?>, Object> values) {
            this.values = values;
        }

        /**
         * @param flag a flag of the table
         * @return its value: given, from the environment, the default, or {@link Flag}'s absent
         *     value (null, or an empty list)
         * @throws IllegalArgumentException for a flag of another table
         */
        @SuppressWarnings("unchecked")
        public <T> T get(Flag<T> flag) {
            if (!values.containsKey(flag)) {
                throw new IllegalArgumentException(flag + " is not a flag of this command");
            }
            return (T) values.get(flag);
        }
    }
}

package io.watchfanout.common;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import picocli.CommandLine;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Picocli default-value provider that reads every long option {@code --flag-name} from
 * the environment variable {@code WATCHFANOUT_FLAG_NAME} (README.md, "Command line": "Every flag also reads
 * from {@code WATCHFANOUT_<FLAG_NAME>}"). A flag given on the command line wins over the
 * environment, which wins over the built-in default.
 *
 * <p>Immutable and thread-safe.
 */
public final class EnvironmentDefaults implements IDefaultValueProvider {
    /** The prefix of every environment variable the runnables read. */
    public static final String PREFIX = "WATCHFANOUT_";

    private final Map<String, String> environment;

    /** Reads the process environment. */
    public EnvironmentDefaults() {
        this(System.getenv());
    }

    /** @param environment the variables to read, e.g. a fixed map in tests */
    public EnvironmentDefaults(Map<String, String> environment) {
        this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
    }

    /**
     * The environment variable that mirrors an option: {@code --kafka-bootstrap} becomes
     * {@code WATCHFANOUT_KAFKA_BOOTSTRAP}.
     *
     * @param longName the option's long name, with or without leading dashes
     */
    public static String variableFor(String longName) {
        String bare = longName.replaceFirst("^-+", "");
        return PREFIX + bare.replace('-', '_').toUpperCase(Locale.ROOT);
    }

    /**
     * The value of the variable of {@code longName}, or null when it is not set.
     *
     * @param longName the option's long name, with or without leading dashes
     */
    public String variable(String longName) {
        return environment.get(variableFor(longName));
    }

    /**
     * The variable's value as the option's default, or the option's own default. Not for a
     * negatable toggle ({@code --[no-]x}): picocli would read a default of true as "--x means
     * false"; {@link FlagTable#values} reads a toggle's variable itself.
     *
     * @throws CommandLine.ParameterException when the variable of an on/off option with an
     *     optional value ({@code --demo[=BOOL]}) is neither true nor false, naming it and the flag
     */
    @Override
    public String defaultValue(ArgSpec argSpec) {
        if (!(argSpec instanceof OptionSpec) || ((OptionSpec) argSpec).negatable()) {
            return null;
        }
        String name = ((OptionSpec) argSpec).longestName();
        String value = environment.get(variableFor(name));
        if (value != null && argSpec.type() == boolean.class && !value.strip().matches("(?i)true|false")) {
            // picocli's own message says only "'x' is not a boolean"; a toggle's variable says what is expected.
            throw new CommandLine.ParameterException(
                    argSpec.command().commandLine(),
                    variableFor(name) + " (" + name + "): '" + value + "' (expected: true or false)");
        }
        return value != null ? value : argSpec.defaultValue();
    }
}

package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Toggles ({@code --[no-]x}) mean what they say whatever their default, on the command line and in the environment. */
class FlagTableTest {
    static final Flag<Boolean> ON = Flag.toggle("--on").defaultValue("true").help("On by default.");
    static final Flag<Boolean> OFF = Flag.toggle("--off").defaultValue("false").help("Off by default.");

    /** The table of the test command. */
    public static final class Table extends FlagTable {
        public Table() {
            super(DefaultStyle.SENTENCE, ON, OFF);
        }
    }

    @Command(name = "toggles", modelTransformer = Table.class)
    static final class Toggles implements Runnable {
        @Override
        public void run() {}
    }

    private static boolean[] parse(Map<String, String> env, String... args) {
        CommandLine cl = new CommandLine(new Toggles()).setDefaultValueProvider(new EnvironmentDefaults(env));
        cl.parseArgs(args);
        FlagTable.Values v = new Table().values(cl.getCommandSpec());
        return new boolean[] {v.get(ON), v.get(OFF)};
    }

    @Test
    void theCommandLineWinsTheEnvironmentNextThenTheDefault() {
        assertThat(parse(Map.of())).containsExactly(true, false);
        assertThat(parse(Map.of(), "--on", "--off")).containsExactly(true, true);
        assertThat(parse(Map.of(), "--no-on", "--no-off")).containsExactly(false, false);
        assertThat(parse(Map.of("WATCHFANOUT_ON", "false", "WATCHFANOUT_OFF", "TRUE")))
                .containsExactly(false, true);
        assertThat(parse(Map.of("WATCHFANOUT_ON", "false", "WATCHFANOUT_OFF", "true"), "--on", "--no-off"))
                .containsExactly(true, false);
    }

    @Test
    void aVariableThatIsNoBooleanIsAUsageError() {
        assertThatThrownBy(() -> parse(Map.of("WATCHFANOUT_ON", "yes")))
                .isInstanceOf(CommandLine.ParameterException.class)
                .hasMessage("WATCHFANOUT_ON (--on): 'yes' (expected: true or false)");
    }

    @Test
    void helpShowsTheDefaultOfAToggle() {
        String help = new CommandLine(new Toggles()).getUsageMessage();
        assertThat(help).contains("--[no-]on").contains("Default: true").contains("Default: false");
    }
}

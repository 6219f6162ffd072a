package io.watchfanout.ingester;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The ingester's command line: flags, defaults, environment and errors. */
class IngesterMainTest {

  private static String[] run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = IngesterMain.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = args.length > 0 && args[0].equals("--help") ? cl.execute(args) : parseOnly(cl, args);
    return new String[] {Integer.toString(code), out.toString(), err.toString()};
  }

  private static int parseOnly(CommandLine cl, String... args) {
    try {
      cl.parseArgs(args);
      ((IngesterMain) cl.getCommand()).config();
      return 0;
    } catch (CommandLine.ParameterException e) {
      cl.getErr().println(e.getMessage());
      cl.getErr().flush();
      return 2;
    }
  }

  @Test
  void helpListsEveryFlagWithItsDefault() {
    String[] r = run("--help");
    assertThat(r[0]).isEqualTo("0");
    assertThat(r[1]).contains("--etcd-endpoints", "--kafka-bootstrap", "--topic-prefix", "--key-prefix",
        "--http-port", "Default: 9100", "--max-record-bytes", "Default: 8MiB", "WATCHFANOUT_");
  }

  @Test
  void requiredFlagsAndRangesAreChecked() {
    assertThat(run("--kafka-bootstrap", "k:9092")[2]).contains("Missing required options");
    String[] bad = run("--etcd-endpoints", "http://e:2379", "--kafka-bootstrap", "k:9092", "--topic-prefix", "t",
        "--state-partitions", "0");
    assertThat(bad[0]).isEqualTo("2");
    assertThat(bad[2]).contains("--state-partitions: 0 (expected: >= 1)");
    String[] duration = run("--etcd-endpoints", "http://e:2379", "--kafka-bootstrap", "k:9092", "--topic-prefix",
        "t", "--transaction-timeout", "soon");
    assertThat(duration[2]).contains("'soon' is not a duration");
    String[] key = run("--etcd-endpoints", "http://e:2379", "--kafka-bootstrap", "k:9092", "--topic-prefix",
        "t", "--key-prefix", "/a%zz");
    assertThat(key[2]).contains("--key-prefix").contains("malformed escape");
    String[] isr = run("--etcd-endpoints", "http://e:2379", "--kafka-bootstrap", "k:9092", "--topic-prefix",
        "t", "--replication-factor", "3", "--min-insync-replicas", "4");
    assertThat(isr[0]).isEqualTo("2");
    assertThat(isr[2]).contains("--min-insync-replicas: 4 (expected: <= --replication-factor 3)");
  }

  @Test
  void defaultsFollowTheTopicPrefixAndKeysArePercentDecoded() {
    CommandLine cl = IngesterMain.commandLine();
    cl.parseArgs("--etcd-endpoints", "http://a:2379,http://b:2379", "--kafka-bootstrap", "k:9092",
        "--topic-prefix", "watch", "--key-prefix", "/registry/%00");
    IngesterConfig config = ((IngesterMain) cl.getCommand()).config();
    assertThat(config.etcdEndpoints()).containsExactly("http://a:2379", "http://b:2379");
    assertThat(config.transactionalId()).isEqualTo("watch.ingester");
    assertThat(config.keyPrefix().toByteArray()).endsWith(0);
    assertThat(config.maxRecordBytes()).isEqualTo(8 << 20);
    assertThat(config.runMaterializer()).isTrue();
  }
}

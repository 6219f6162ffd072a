package io.watchfanout.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --etcd-*}: the password file and the pairs. */
class EtcdSecurityTest {
    @TempDir
    Path dir;

    @Test
    void thePasswordIsTheFileWithoutItsTrailingLineBreak() throws Exception {
        Path lf = Files.writeString(dir.resolve("lf"), "s3cret\n");
        Path crlf = Files.writeString(dir.resolve("crlf"), "s3cret\r\n");
        Path bare = Files.writeString(dir.resolve("bare"), " s3cret ");
        Path twoLines = Files.writeString(dir.resolve("two"), "s3cret\n\n");
        assertThat(EtcdSecurity.readPassword(lf)).isEqualTo("s3cret");
        assertThat(EtcdSecurity.readPassword(crlf)).isEqualTo("s3cret");
        assertThat(EtcdSecurity.readPassword(bare)).isEqualTo(" s3cret ");
        assertThat(EtcdSecurity.readPassword(twoLines)).isEqualTo("s3cret\n");
    }

    @Test
    void aMissingOrEmptyPasswordFileIsNamedNeverItsContent() throws Exception {
        Path missing = dir.resolve("missing");
        assertThatThrownBy(() -> EtcdSecurity.readPassword(missing)).hasMessage(missing + ": no such file");
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        assertThatThrownBy(() -> EtcdSecurity.readPassword(empty))
                .hasMessage(empty + ": empty (expected: the password)");
    }

    @Test
    void pairsAreBothOrNeitherAndThePasswordIsNeverShown() {
        assertThatThrownBy(() -> EtcdSecurity.of(null, Path.of("c.pem"), null, null, null))
                .hasMessageContaining("both or neither");
        assertThatThrownBy(() -> EtcdSecurity.of(null, null, null, "root", null))
                .hasMessageContaining("both or neither");
        EtcdSecurity s = EtcdSecurity.of(Path.of("ca.pem"), null, null, "root", "s3cret");
        assertThat(s.tls()).isTrue();
        assertThat(s.authenticates()).isTrue();
        assertThat(s.toString()).contains("user=root").doesNotContain("s3cret");
        assertThat(EtcdSecurity.NONE.tls()).isFalse();
    }
}

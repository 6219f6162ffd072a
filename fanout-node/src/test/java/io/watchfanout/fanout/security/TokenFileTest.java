package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenFileTest {
    @TempDir
    Path dir;

    private Path write(String text) throws IOException {
        Path file = dir.resolve("tokens.csv");
        Files.writeString(file, text);
        return file;
    }

    private static Credentials bearer(String token) {
        return new Credentials(null, "Bearer " + token, null);
    }

    @Test
    void aListedTokenIsItsUserWithGroups() throws Exception {
        TokenFile tokens = new TokenFile(write("""
                # token,user,uid,groups
                s3cret,alice,1001,"readers, dev"

                other,bob,1002
                """));

        Identity alice = tokens.authenticate(bearer("s3cret"));
        assertThat(alice.name()).isEqualTo("alice");
        assertThat(alice.groups()).containsExactlyInAnyOrder("readers", "dev");
        assertThat(alice.method()).isEqualTo(Identity.Method.TOKEN);
        assertThat(tokens.authenticate(new Credentials(null, null, "other")).groups())
                .isEmpty();
        assertThat(tokens.size()).isEqualTo(2);
    }

    @Test
    void anUnknownOpaqueTokenIsRefused() throws Exception {
        TokenFile tokens = new TokenFile(write("s3cret,alice,1001\n"));

        assertThatThrownBy(() -> tokens.authenticate(bearer("s3cre"))).hasMessage("unknown bearer token");
    }

    @Test
    void tokensOfOtherKindsArePassedOn() throws Exception {
        TokenFile tokens = new TokenFile(write("s3cret,alice,1001\nlisted.header.sig,carol,1003\n"));

        assertThat(tokens.authenticate(bearer("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")))
                .isNull();
        assertThat(tokens.authenticate(bearer("UxSWxVZbQeBUfCcz.42"))).isNull();
        assertThat(tokens.authenticate(Credentials.NONE)).isNull();
        assertThat(tokens.authenticate(bearer("listed.header.sig")).name()).isEqualTo("carol");
    }

    @Test
    void aMalformedLineNamesItsNumber() throws IOException {
        Path twoFields = write("# comment\ns3cret,alice,1001\nbroken,bob\n");
        assertThatThrownBy(() -> new TokenFile(twoFields))
                .hasMessageContaining("line 3")
                .hasMessageContaining("2 fields");

        Path quote = write("s3cret,alice,1001,\"readers\n");
        assertThatThrownBy(() -> new TokenFile(quote))
                .hasMessageContaining("line 1")
                .hasMessageContaining("quoted");

        Path empty = write(",alice,1001\n");
        assertThatThrownBy(() -> new TokenFile(empty))
                .hasMessageContaining("line 1")
                .hasMessageContaining("empty");

        Path five = write("s3cret,alice,1001,g,extra\n");
        assertThatThrownBy(() -> new TokenFile(five)).hasMessageContaining("5 fields");
    }

    @Test
    void aDuplicateTokenIsAnError() throws IOException {
        Path file = write("s3cret,alice,1001\ns3cret,bob,1002\n");

        assertThatThrownBy(() -> new TokenFile(file))
                .hasMessageContaining("line 2")
                .hasMessageContaining("listed twice")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void aChangedFileIsReloadedAndABrokenOneKeepsTheOldTokens() throws Exception {
        Path file = write("s3cret,alice,1001\n");
        TokenFile tokens = new TokenFile(file);
        assertThat(tokens.reload()).isFalse();

        FileTime before = Files.getLastModifiedTime(file);
        Files.writeString(file, "n3w,alice,1001\n");
        Files.setLastModifiedTime(file, FileTime.fromMillis(before.toMillis() + 2000));
        assertThat(tokens.reload()).isTrue();
        assertThat(tokens.authenticate(bearer("n3w")).name()).isEqualTo("alice");
        assertThatThrownBy(() -> tokens.authenticate(bearer("s3cret"))).isInstanceOf(AuthenticationException.class);

        Files.writeString(file, "broken\n");
        Files.setLastModifiedTime(file, FileTime.fromMillis(before.toMillis() + 4000));
        assertThatThrownBy(tokens::reload).isInstanceOf(IOException.class).hasMessageContaining("line 1");
        assertThat(tokens.authenticate(bearer("n3w")).name()).isEqualTo("alice");
    }

    @Test
    void theCertificateAuthenticatorTakesTheCommonName() throws Exception {
        CertificateAuthenticator cert = new CertificateAuthenticator();

        assertThat(cert.authenticate(new Credentials("node-7", null, null)))
                .isEqualTo(Identity.of("node-7", Identity.Method.CERTIFICATE));
        assertThat(cert.authenticate(bearer("s3cret"))).isNull();
    }
}

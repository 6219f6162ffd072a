package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeSecurityTest {
    @TempDir
    Path dir;

    private SecurityConfig config(Path tokens, Path jwks, boolean etcdUsers, List<String> httpAuthn, String authz) {
        return new SecurityConfig(
                false,
                true,
                tokens,
                jwks == null
                        ? SecurityConfig.Jwt.NONE
                        : new SecurityConfig.Jwt(jwks, "https://issuer.example", "watch-fanout", "sub", "groups"),
                etcdUsers,
                httpAuthn,
                List.of(),
                authz,
                Duration.ofSeconds(5),
                WatchLimits.NONE);
    }

    private Path file(String name, String text) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, text);
        return f;
    }

    @Test
    void eachListenerAsksItsMethodsAndThePolicyDecides() throws Exception {
        Path tokens = file("tokens.csv", "s3cret,alice,1001,readers\n");
        Path policy = file(
                "policy.json",
                "{\"rules\": [{\"groups\": [\"readers\"], \"verbs\": [\"read\"], \"prefixes\": [\"/a/\"]}]}");
        try (AccessControl access =
                NodeSecurity.create(config(tokens, null, true, List.of("token"), "file:" + policy), "n1", null)) {
            Credentials bearer = new Credentials(null, "Bearer s3cret", null);
            Credentials cert = new Credentials("node-7", null, null);

            Identity alice = access.authenticate(Listener.HTTP, bearer, "http");
            assertThat(alice.name()).isEqualTo("alice");
            access.authorize(alice, Verb.READ, KeyRange.prefix(ByteString.copyFromUtf8("/a/")), "http");
            assertThatThrownBy(() -> access.authenticate(Listener.HTTP, cert, "http"))
                    .isInstanceOf(AuthenticationException.class);
            assertThat(access.authenticate(Listener.ETCD_API, cert, "etcd-grpc").name())
                    .isEqualTo("node-7");
            assertThat(access.etcdTokens()).isNotNull();
        }
    }

    @Test
    void aMissingFileIsAnErrorNamingTheFlag() throws IOException {
        Path policy = file("policy.json", "{\"rules\": []}");
        Path missing = dir.resolve("jwks.json");

        assertThatThrownBy(() ->
                        NodeSecurity.create(config(null, missing, false, List.of(), "file:" + policy), "n1", null))
                .isInstanceOf(SecuritySetupException.class)
                .hasMessage("--jwt-jwks-file: " + missing + ": no such file");
    }

    @Test
    void aBrokenFileIsAnErrorNamingTheFlagAndTheLine() throws IOException {
        Path policy = file("policy.json", "{\"rules\": []}");
        Path tokens = file("tokens.csv", "only-a-token\n");

        assertThatThrownBy(
                        () -> NodeSecurity.create(config(tokens, null, false, List.of(), "file:" + policy), "n1", null))
                .isInstanceOf(SecuritySetupException.class)
                .hasMessageStartingWith("--token-auth-file: " + tokens + ": line 1");
        assertThatThrownBy(
                        () -> NodeSecurity.create(config(null, null, false, List.of(), "file:" + tokens), "n1", null))
                .isInstanceOf(SecuritySetupException.class)
                .hasMessageStartingWith("--authz: " + tokens);
    }

    @Test
    void etcdAuthorizationNeedsTheChannelToEtcd() {
        assertThatThrownBy(() -> NodeSecurity.create(config(null, null, false, List.of(), "etcd"), "n1", null))
                .isInstanceOf(SecuritySetupException.class)
                .hasMessageContaining("--authz=etcd");
    }
}

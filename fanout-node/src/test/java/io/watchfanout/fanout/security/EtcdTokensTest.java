package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class EtcdTokensTest {
    private static final String TOKEN = "UxSWxVZbQeBUfCcz.42";

    private final AtomicLong nanos = new AtomicLong(1_000);
    private final EtcdTokens tokens = new EtcdTokens(nanos::get);

    private static Credentials metadata(String token) {
        return new Credentials(null, null, token);
    }

    @Test
    void anIssuedTokenIsItsEtcdUser() throws Exception {
        tokens.issued(TOKEN, "reader");

        Identity id = tokens.authenticate(metadata(TOKEN));
        assertThat(id).isEqualTo(Identity.of("reader", Identity.Method.ETCD));
        assertThat(tokens.authenticate(new Credentials(null, "Bearer " + TOKEN, null)))
                .isEqualTo(id);
    }

    @Test
    void anUnknownSimpleTokenGetsEtcdsMessage() {
        assertThatThrownBy(() -> tokens.authenticate(metadata("AbCdEfGhIjKlMnOp.7")))
                .isInstanceOf(AuthenticationException.class)
                .hasMessage("etcdserver: invalid auth token");
    }

    @Test
    void tokensOfOtherKindsArePassedOnUnlessIssued() throws Exception {
        String jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
        assertThat(tokens.authenticate(metadata("opaque-static-token"))).isNull();
        assertThat(tokens.authenticate(metadata(jwt))).isNull();
        assertThat(tokens.authenticate(Credentials.NONE)).isNull();

        tokens.issued(jwt, "root");
        assertThat(tokens.authenticate(metadata(jwt)).name()).isEqualTo("root");
    }

    @Test
    void aTokenExpiresAfterTheTtlSinceItsLastUse() throws Exception {
        tokens.issued(TOKEN, "reader");
        long ttl = EtcdTokens.TOKEN_TTL.toNanos();

        nanos.addAndGet(ttl - 1);
        assertThat(tokens.authenticate(metadata(TOKEN))).isNotNull();
        nanos.addAndGet(ttl - 1);
        assertThat(tokens.authenticate(metadata(TOKEN))).isNotNull(); // the use above renewed it
        nanos.addAndGet(ttl + 1);
        assertThatThrownBy(() -> tokens.authenticate(metadata(TOKEN))).hasMessage(EtcdTokens.INVALID_TOKEN);
    }

    @Test
    void reloadForgetsExpiredTokens() {
        tokens.issued(TOKEN, "reader");
        tokens.issued("", "nobody");
        assertThat(tokens.size()).isEqualTo(1);

        nanos.addAndGet(EtcdTokens.TOKEN_TTL.toNanos() + 1);
        assertThat(tokens.reload()).isFalse();
        assertThat(tokens.size()).isZero();
    }
}

package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JwtAuthenticatorTest {
    private static final String ISSUER = "https://issuer.example";
    private static final String AUDIENCE = "watch-fanout";
    private static final Instant NOW = Instant.parse("2026-01-02T03:04:05Z");

    private static RSAKey rsa;
    private static ECKey ec;
    private static RSAKey stranger;

    @TempDir
    Path dir;

    private Path jwks;
    private JwtAuthenticator jwt;

    @BeforeAll
    static void keys() throws JOSEException {
        rsa = new RSAKeyGenerator(2048).keyID("rsa-1").generate();
        ec = new ECKeyGenerator(Curve.P_256).keyID("ec-1").generate();
        stranger = new RSAKeyGenerator(2048).keyID("rsa-1").generate();
    }

    @BeforeEach
    void authenticator() throws IOException {
        jwks = dir.resolve("jwks.json");
        writeKeys(rsa.toPublicJWK(), ec.toPublicJWK());
        jwt = new JwtAuthenticator(jwks, ISSUER, AUDIENCE, "sub", "groups", Clock.fixed(NOW, ZoneOffset.UTC));
    }

    private void writeKeys(JWK... keys) throws IOException {
        Files.writeString(jwks, new JWKSet(List.of(keys)).toString());
    }

    private static JWTClaimsSet.Builder claims() {
        return new JWTClaimsSet.Builder()
                .issuer(ISSUER)
                .audience(List.of("other", AUDIENCE))
                .subject("alice")
                .claim("groups", List.of("readers", "dev"))
                .issueTime(Date.from(NOW.minusSeconds(60)))
                .expirationTime(Date.from(NOW.plus(Duration.ofMinutes(10))));
    }

    private static String sign(JWTClaimsSet claims, JWK key) throws JOSEException {
        JWSAlgorithm alg = key instanceof RSAKey ? JWSAlgorithm.RS256 : JWSAlgorithm.ES256;
        JWSSigner signer = key instanceof RSAKey r ? new RSASSASigner(r) : new ECDSASigner((ECKey) key);
        SignedJWT token =
                new SignedJWT(new JWSHeader.Builder(alg).keyID(key.getKeyID()).build(), claims);
        token.sign(signer);
        return token.serialize();
    }

    private Identity present(String token) throws AuthenticationException {
        return jwt.authenticate(new Credentials(null, "Bearer " + token, null));
    }

    @Test
    void aGoodTokenIsItsSubjectWithGroups() throws Exception {
        Identity id = present(sign(claims().build(), rsa));

        assertThat(id.name()).isEqualTo("alice");
        assertThat(id.groups()).containsExactlyInAnyOrder("readers", "dev");
        assertThat(id.method()).isEqualTo(Identity.Method.JWT);
        assertThat(present(sign(claims().build(), ec)).name()).isEqualTo("alice");
    }

    @Test
    void anExpiredTokenIsRefused() throws Exception {
        String token = sign(
                claims().expirationTime(Date.from(NOW.minus(Duration.ofMinutes(5))))
                        .build(),
                rsa);

        assertThatThrownBy(() -> present(token)).hasMessageStartingWith("JWT expired at");
    }

    @Test
    void aTokenSignedByAKeyNotInTheSetIsRefused() throws Exception {
        String token = sign(claims().build(), stranger);

        assertThatThrownBy(() -> present(token)).hasMessageContaining("signature does not verify");
    }

    @Test
    void aTokenForAnotherAudienceIsRefused() throws Exception {
        String token = sign(claims().audience("someone-else").build(), rsa);

        assertThatThrownBy(() -> present(token))
                .hasMessageContaining("audience")
                .hasMessageContaining(AUDIENCE);
    }

    @Test
    void aTokenOfAnotherIssuerIsRefused() throws Exception {
        String token = sign(claims().issuer("https://evil.example").build(), rsa);

        assertThatThrownBy(() -> present(token)).hasMessageContaining("issuer \"https://evil.example\"");
    }

    @Test
    void anUnsignedTokenIsRefused() {
        String token = new PlainJWT(claims().build()).serialize();

        assertThatThrownBy(() -> present(token)).hasMessageContaining("alg none");
    }

    @Test
    void aMalformedTokenIsRefused() {
        assertThatThrownBy(() -> present("eyJub3QiOiJqc29u.e30.c2ln")).hasMessageStartingWith("malformed JWT");
    }

    @Test
    void aTokenNotYetValidIsRefused() throws Exception {
        String token = sign(
                claims().notBeforeTime(Date.from(NOW.plus(Duration.ofMinutes(2))))
                        .build(),
                rsa);

        assertThatThrownBy(() -> present(token)).hasMessageStartingWith("JWT not valid before");
    }

    @Test
    void theClockSkewIsTolerated() throws Exception {
        Instant withinSkew = NOW.minus(JwtAuthenticator.CLOCK_SKEW).plusSeconds(1);
        String token = sign(claims().expirationTime(Date.from(withinSkew)).build(), rsa);

        assertThat(present(token).name()).isEqualTo("alice");
    }

    @Test
    void tokensOfOtherKindsArePassedOn() throws Exception {
        assertThat(present("opaque-static-token")).isNull();
        assertThat(present("UxSWxVZbQeBUfCcz.42")).isNull();
        assertThat(jwt.authenticate(Credentials.NONE)).isNull();
    }

    @Test
    void aChangedKeySetIsReloaded() throws Exception {
        String token = sign(claims().build(), rsa);
        assertThat(jwt.reload()).isFalse();

        FileTime before = Files.getLastModifiedTime(jwks);
        writeKeys(ec.toPublicJWK());
        Files.setLastModifiedTime(jwks, FileTime.fromMillis(before.toMillis() + 2000));

        assertThat(jwt.reload()).isTrue();
        assertThatThrownBy(() -> present(token)).hasMessageContaining("unknown key");
    }

    @Test
    void aKeySetWithoutSignatureKeysIsAnError() throws IOException {
        Files.writeString(jwks, "{\"keys\": []}");

        assertThatThrownBy(() -> new JwtAuthenticator(jwks, ISSUER, AUDIENCE, "sub", "groups", Clock.systemUTC()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("no RS256");
    }
}

package io.watchfanout.fanout.kube.authz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.Identity;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.interfaces.ECPrivateKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ServiceAccount tokens as kube-apiserver issues them, checked as kube-apiserver checks them. */
class ServiceAccountTokensTest {
    private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");
    private static final String ISSUER = "https://kubernetes.default.svc.cluster.local";

    @TempDir
    Path dir;

    private KeyPair rsa;
    private KeyPair ec;
    private KeyPair stranger;
    private final Map<String, String> objects = new HashMap<>();
    private ServiceAccountTokens tokens;

    @BeforeEach
    void setUp() throws Exception {
        KeyPairGenerator rsaGen = KeyPairGenerator.getInstance("RSA");
        rsaGen.initialize(2048);
        rsa = rsaGen.generateKeyPair();
        stranger = rsaGen.generateKeyPair();
        KeyPairGenerator ecGen = KeyPairGenerator.getInstance("EC");
        ecGen.initialize(256);
        ec = ecGen.generateKeyPair();
        Path rsaFile = pem("sa.pub", rsa.getPublic());
        // A PKCS#8 private key: the node uses its public half, as kube-apiserver does.
        Path ecFile = pem("sa-ec.key", new JcaPKCS8Generator(ec.getPrivate(), null));
        objects.put("serviceaccounts/ci/builder", "sa-uid-1");
        objects.put("pods/ci/build-7", "pod-uid-1");
        objects.put("secrets/ci/builder-token-x", "secret-uid-1");
        tokens = new ServiceAccountTokens(
                List.of(rsaFile, ecFile),
                List.of(ISSUER),
                List.of("https://kubernetes.default.svc", "vault"),
                new ServiceAccountTokens.Lookup() {
                    @Override
                    public String uid(String resource, String namespace, String name) {
                        return objects.get(resource + "/" + namespace + "/" + name);
                    }

                    @Override
                    public byte[] secretToken(String namespace, String name) {
                        String token = objects.get("secrets/" + namespace + "/" + name + "#token");
                        return token == null ? null : token.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    }
                },
                Clock.fixed(NOW, ZoneOffset.UTC));
    }

    @Test
    void aBoundTokenIsTheServiceAccountWithKubeApiserversGroups() throws Exception {
        Identity id = tokens.authenticate(bearer(sign(bound().build(), rsa, JWSAlgorithm.RS256)));
        assertThat(id.name()).isEqualTo("system:serviceaccount:ci:builder");
        assertThat(id.groups())
                .containsExactlyInAnyOrder(
                        "system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated");
        assertThat(id.method()).isEqualTo(Identity.Method.SERVICE_ACCOUNT);
        assertThat(tokens.authenticate(bearer(sign(bound().build(), ec, JWSAlgorithm.ES256)))
                        .name())
                .isEqualTo("system:serviceaccount:ci:builder");
    }

    @Test
    void aLegacySecretTokenWithoutExpiryIsAcceptedWhileItsSecretExists() throws Exception {
        JWTClaimsSet legacy = new JWTClaimsSet.Builder()
                .issuer(ServiceAccountTokens.LEGACY_ISSUER)
                .subject("system:serviceaccount:ci:builder")
                .claim("kubernetes.io/serviceaccount/namespace", "ci")
                .claim("kubernetes.io/serviceaccount/service-account.name", "builder")
                .claim("kubernetes.io/serviceaccount/service-account.uid", "sa-uid-1")
                .claim("kubernetes.io/serviceaccount/secret.name", "builder-token-x")
                .build();
        String token = sign(legacy, rsa, JWSAlgorithm.RS256);
        objects.put("secrets/ci/builder-token-x#token", token);
        assertThat(tokens.authenticate(bearer(token)).name()).isEqualTo("system:serviceaccount:ci:builder");
        // The Secret holds another token now: this one is refused, as kube-apiserver's legacy validator does.
        objects.put("secrets/ci/builder-token-x#token", "another-token");
        assertThatThrownBy(() -> tokens.authenticate(bearer(token)))
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining("does not match the copy in secrets ci/builder-token-x");
        objects.put("secrets/ci/builder-token-x#token", token);
        assertThat(tokens.authenticate(bearer(token)).name()).isEqualTo("system:serviceaccount:ci:builder");
        objects.remove("secrets/ci/builder-token-x");
        assertThatThrownBy(() -> tokens.authenticate(bearer(token)))
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining("secrets ci/builder-token-x");
    }

    @Test
    void aKeyIdNamingNoKeyIsOnlyAHint() throws Exception {
        assertThat(tokens.authenticate(bearer(signWithKid(bound().build(), rsa, "nope")))
                        .name())
                .isEqualTo("system:serviceaccount:ci:builder");
    }

    @Test
    void badTokensAreRefusedWithTheReason() throws Exception {
        assertRefused(
                sign(
                        bound().expirationTime(Date.from(NOW.minus(Duration.ofMinutes(5))))
                                .build(),
                        rsa,
                        JWSAlgorithm.RS256),
                "expired");
        assertRefused(sign(bound().audience("someone-else").build(), rsa, JWSAlgorithm.RS256), "audience");
        // The key id is a hint: a key that is not in the files does not verify, whatever it is called.
        assertRefused(sign(bound().build(), stranger, JWSAlgorithm.RS256), "does not verify");
        assertRefused(signWithKid(bound().build(), stranger, kid(rsa)), "does not verify");
        assertRefused(
                sign(bound().subject("system:serviceaccount:ci:admin").build(), rsa, JWSAlgorithm.RS256), "subject");
        objects.put("serviceaccounts/ci/builder", "sa-uid-2");
        assertRefused(sign(bound().build(), rsa, JWSAlgorithm.RS256), "recreated");
        objects.remove("serviceaccounts/ci/builder");
        assertRefused(sign(bound().build(), rsa, JWSAlgorithm.RS256), "no longer exists");
        objects.put("serviceaccounts/ci/builder", "sa-uid-1");
        objects.remove("pods/ci/build-7");
        assertRefused(sign(bound().build(), rsa, JWSAlgorithm.RS256), "pods ci/build-7");
        assertRefused(
                "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2t1YmVybmV0ZXMuZGVmYXVsdC5zdmMuY2x1c3Rlci5sb2NhbCJ9.",
                "alg none");
    }

    @Test
    void aTokenOfAnotherIssuerIsLeftToTheNextAuthenticator() throws Exception {
        assertThat(tokens.authenticate(
                        bearer(sign(bound().issuer("https://dex.example.com").build(), rsa, JWSAlgorithm.RS256))))
                .isNull();
        assertThat(tokens.authenticate(new Credentials(null, null, null))).isNull();
    }

    private void assertRefused(String token, String reason) {
        assertThatThrownBy(() -> tokens.authenticate(bearer(token)))
                .as(reason)
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining(reason);
    }

    private static JWTClaimsSet.Builder bound() {
        return new JWTClaimsSet.Builder()
                .issuer(ISSUER)
                .subject("system:serviceaccount:ci:builder")
                .audience(List.of("https://kubernetes.default.svc"))
                .issueTime(Date.from(NOW.minus(Duration.ofMinutes(1))))
                .notBeforeTime(Date.from(NOW.minus(Duration.ofMinutes(1))))
                .expirationTime(Date.from(NOW.plus(Duration.ofHours(1))))
                .claim(
                        "kubernetes.io",
                        Map.of(
                                "namespace", "ci",
                                "serviceaccount", Map.of("name", "builder", "uid", "sa-uid-1"),
                                "pod", Map.of("name", "build-7", "uid", "pod-uid-1")));
    }

    private static String sign(JWTClaimsSet claims, KeyPair key, JWSAlgorithm alg) throws Exception {
        return signWithKid(claims, key, kid(key), alg);
    }

    private static String signWithKid(JWTClaimsSet claims, KeyPair key, String kid) throws Exception {
        return signWithKid(claims, key, kid, JWSAlgorithm.RS256);
    }

    private static String signWithKid(JWTClaimsSet claims, KeyPair key, String kid, JWSAlgorithm alg) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).build(), claims);
        if (key.getPrivate() instanceof ECPrivateKey ecKey) {
            jwt.sign(new ECDSASigner(ecKey));
        } else {
            jwt.sign(new RSASSASigner(key.getPrivate()));
        }
        return jwt.serialize();
    }

    /** kube-apiserver's key id: unpadded base64url of the SHA-256 of the public key's DER form. */
    private static String kid(KeyPair key) throws Exception {
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(MessageDigest.getInstance("SHA-256")
                        .digest(key.getPublic().getEncoded()));
    }

    private static Credentials bearer(String token) {
        return new Credentials(null, "Bearer " + token, null);
    }

    private Path pem(String name, Object key) throws Exception {
        StringWriter text = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
            writer.writeObject(key);
        }
        Path file = dir.resolve(name);
        Files.writeString(file, text.toString());
        return file;
    }
}

package io.watchfanout.fanout.security;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * {@code jwt} ({@code --jwt-jwks-file}): JWT bearer tokens signed with RS256 or ES256 by a key
 * of a JSON Web Key Set file (reloaded when it changes). A token is accepted when its signature
 * verifies with a key of the set (the one its {@code kid} names, when it names one), its
 * {@code iss} is {@code --jwt-issuer}, its {@code aud} contains {@code --jwt-audience}, its
 * {@code exp} is in the future and its {@code nbf} and {@code iat} are not, each within
 * {@link #CLOCK_SKEW}. The identity is the {@code --jwt-username-claim} (a non-empty string),
 * its groups the {@code --jwt-groups-claim} (a list of strings; absent = none).
 *
 * <p>Unsigned ({@code alg: none}), encrypted and otherwise signed (HS256, ...) tokens are refused.
 * Only {@link TokenKind#JWT}-shaped tokens are judged; others are passed on. Each refusal says
 * which check failed.
 *
 * <p>Thread-safe: the keys are replaced as a whole by {@link #reload()}.
 */
final class JwtAuthenticator implements Authenticator {
    /** How far the clocks of the issuer and this node may disagree for exp, nbf and iat. */
    static final Duration CLOCK_SKEW = SignedTokens.CLOCK_SKEW;

    private static final Set<JWSAlgorithm> ALGORITHMS = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.ES256);
    private static final String KEY_SOURCE = "--jwt-jwks-file";

    private final String issuer;
    private final String audience;
    private final String usernameClaim;
    private final String groupsClaim;
    private final Clock clock;
    private final ReloadingFile<List<SignedTokens.VerificationKey>> keys;

    /**
     * Reads the key set.
     *
     * @throws IOException when the file cannot be read, is not a JWKS, or has no RS256/ES256 key
     */
    JwtAuthenticator(
            Path jwksFile, String issuer, String audience, String usernameClaim, String groupsClaim, Clock clock)
            throws IOException {
        this.issuer = Objects.requireNonNull(issuer, "issuer");
        this.audience = Objects.requireNonNull(audience, "audience");
        this.usernameClaim = Objects.requireNonNull(usernameClaim, "usernameClaim");
        this.groupsClaim = Objects.requireNonNull(groupsClaim, "groupsClaim");
        this.clock = clock;
        this.keys = new ReloadingFile<>(jwksFile, JwtAuthenticator::parse);
    }

    @Override
    public Identity authenticate(Credentials credentials) throws AuthenticationException {
        String token = credentials.token();
        if (token == null || TokenKind.of(token) != TokenKind.JWT) {
            return null;
        }
        SignedJWT jwt = SignedTokens.signed(token, ALGORITHMS);
        SignedTokens.verify(jwt, keys.get(), KEY_SOURCE);
        JWTClaimsSet claims = SignedTokens.claims(jwt);
        SignedTokens.checkTimes(claims, clock.instant(), false);
        if (!issuer.equals(claims.getIssuer())) {
            throw new AuthenticationException("JWT issuer " + quoted(claims.getIssuer()) + " is not " + quoted(issuer));
        }
        if (claims.getAudience() == null || !claims.getAudience().contains(audience)) {
            throw new AuthenticationException(
                    "JWT audience " + claims.getAudience() + " does not contain " + quoted(audience));
        }
        return new Identity(username(claims), groups(claims), Identity.Method.JWT);
    }

    private String username(JWTClaimsSet claims) throws AuthenticationException {
        Object name = claims.getClaim(usernameClaim);
        if (!(name instanceof String) || ((String) name).isEmpty()) {
            throw new AuthenticationException(
                    "JWT has no non-empty string claim " + quoted(usernameClaim) + " (--jwt-username-claim)");
        }
        return (String) name;
    }

    private Set<String> groups(JWTClaimsSet claims) throws AuthenticationException {
        Object value = claims.getClaim(groupsClaim);
        Set<String> out = new LinkedHashSet<>();
        if (value == null) {
            return out;
        }
        if (value instanceof List<?> list) {
            for (Object g : list) {
                if (!(g instanceof String)) {
                    break;
                }
                out.add((String) g);
            }
            if (out.size() == list.size()) {
                return out;
            }
        }
        throw new AuthenticationException(
                "JWT claim " + quoted(groupsClaim) + " is not a list of strings (--jwt-groups-claim)");
    }

    @Override
    public boolean reload() throws IOException {
        return keys.reload();
    }

    @Override
    public String name() {
        return "jwt";
    }

    private static List<SignedTokens.VerificationKey> parse(Path file) throws IOException {
        JWKSet set;
        try {
            set = JWKSet.parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (ParseException e) {
            throw new IOException(file + ": not a JSON Web Key Set: " + e.getMessage(), e);
        }
        List<SignedTokens.VerificationKey> out = new ArrayList<>();
        for (JWK jwk : set.getKeys()) {
            if (KeyUse.ENCRYPTION.equals(jwk.getKeyUse())) {
                continue;
            }
            try {
                if (jwk instanceof RSAKey rsa && accepts(jwk, JWSAlgorithm.RS256)) {
                    out.add(new SignedTokens.VerificationKey(
                            jwk.getKeyID(), JWSAlgorithm.RS256, new RSASSAVerifier(rsa.toPublicJWK())));
                } else if (jwk instanceof ECKey ec
                        && Curve.P_256.equals(ec.getCurve())
                        && accepts(jwk, JWSAlgorithm.ES256)) {
                    out.add(new SignedTokens.VerificationKey(
                            jwk.getKeyID(), JWSAlgorithm.ES256, new ECDSAVerifier(ec.toPublicJWK())));
                }
            } catch (JOSEException e) {
                throw new IOException(file + ": key " + quoted(jwk.getKeyID()) + ": " + e.getMessage(), e);
            }
        }
        if (out.isEmpty()) {
            throw new IOException(file + ": no RS256 (RSA) or ES256 (EC P-256) signature key");
        }
        return List.copyOf(out);
    }

    private static boolean accepts(JWK jwk, JWSAlgorithm alg) {
        return jwk.getAlgorithm() == null || jwk.getAlgorithm().equals(alg);
    }

    private static String quoted(String s) {
        return SignedTokens.quoted(s);
    }
}

package io.watchfanout.fanout.security;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWT;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Set;

/**
 * The checks every signed bearer token goes through, whoever issued it (the JWTs of
 * {@code --jwt-jwks-file}, kube-apiserver's ServiceAccount tokens): parsed as a signed JWT (no
 * {@code alg: none}, no encrypted JWT, only the allowed algorithms), its signature verified by one
 * of the configured keys, its times checked with {@link #CLOCK_SKEW} of leeway.
 *
 * <p>Stateless and thread-safe. Public for the authenticators that live beside the API they serve
 * (ServiceAccount tokens with the Kubernetes API).
 */
public final class SignedTokens {
    /** How far the clocks of the issuer and this node may disagree for exp, nbf and iat. */
    public static final Duration CLOCK_SKEW = Duration.ofSeconds(30);

    /** A key that may have signed a token: its key id (or null), algorithm and verifier. */
    public record VerificationKey(String id, JWSAlgorithm algorithm, JWSVerifier verifier) {}

    private SignedTokens() {}

    /**
     * Parses a token as a JWS signed with one of {@code algorithms}.
     *
     * @throws AuthenticationException for anything else
     */
    public static SignedJWT signed(String token, Set<JWSAlgorithm> algorithms) throws AuthenticationException {
        JWT jwt;
        try {
            jwt = JWTParser.parse(token);
        } catch (ParseException e) {
            throw new AuthenticationException("malformed JWT: " + e.getMessage());
        }
        if (jwt instanceof PlainJWT) {
            throw new AuthenticationException("unsigned JWT (alg none) refused");
        }
        if (jwt instanceof EncryptedJWT) {
            throw new AuthenticationException("encrypted JWT refused (expected: signed with " + algorithms + ")");
        }
        SignedJWT signed = (SignedJWT) jwt;
        JWSAlgorithm alg = signed.getHeader().getAlgorithm();
        if (!algorithms.contains(alg)) {
            throw new AuthenticationException(
                    "JWT algorithm " + alg + " refused (expected: one of " + algorithms + ")");
        }
        return signed;
    }

    /**
     * Verifies the signature with the keys of the token's algorithm (and key id, when it names one).
     *
     * @param keySource the flag the keys come from, for the message
     * @throws AuthenticationException when no key verifies it
     */
    public static void verify(SignedJWT jwt, List<VerificationKey> keys, String keySource)
            throws AuthenticationException {
        verify(jwt, keys, keySource, false);
    }

    /**
     * As {@link #verify(SignedJWT, List, String)}; with {@code kidIsHint}, a key id that names
     * none of the keys is ignored and every key of the algorithm is tried, as kube-apiserver's
     * ServiceAccount token authenticator does with the keys of its files.
     */
    public static void verify(SignedJWT jwt, List<VerificationKey> keys, String keySource, boolean kidIsHint)
            throws AuthenticationException {
        String named = jwt.getHeader().getKeyID();
        JWSAlgorithm alg = jwt.getHeader().getAlgorithm();
        String kid = kidIsHint && keys.stream().noneMatch(k -> named != null && named.equals(k.id())) ? null : named;
        boolean candidate = false;
        for (VerificationKey k : keys) {
            if (!k.algorithm().equals(alg) || (kid != null && !kid.equals(k.id()))) {
                continue;
            }
            candidate = true;
            try {
                if (jwt.verify(k.verifier())) {
                    return;
                }
            } catch (JOSEException e) {
                // A key that cannot check this signature is just not its key.
            }
        }
        throw new AuthenticationException(
                candidate
                        ? "JWT signature does not verify (bad signature or a key not in " + keySource + ")"
                        : "JWT signed by an unknown key (" + alg + (kid == null ? "" : ", kid " + quoted(kid))
                                + " is not in " + keySource + ")");
    }

    /** The claims of a verified token. */
    public static JWTClaimsSet claims(SignedJWT jwt) throws AuthenticationException {
        try {
            return jwt.getJWTClaimsSet();
        } catch (ParseException e) {
            throw new AuthenticationException("malformed JWT: the payload is not a claims set");
        }
    }

    /**
     * Checks exp (required unless {@code expiryOptional}), nbf and iat against {@code now}.
     *
     * @throws AuthenticationException naming the failed time
     */
    public static void checkTimes(JWTClaimsSet claims, Instant now, boolean expiryOptional)
            throws AuthenticationException {
        Date exp = claims.getExpirationTime();
        if (exp == null && !expiryOptional) {
            throw new AuthenticationException("JWT has no exp claim");
        }
        if (exp != null && !exp.toInstant().plus(CLOCK_SKEW).isAfter(now)) {
            throw new AuthenticationException("JWT expired at " + exp.toInstant());
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && nbf.toInstant().minus(CLOCK_SKEW).isAfter(now)) {
            throw new AuthenticationException("JWT not valid before " + nbf.toInstant());
        }
        Date iat = claims.getIssueTime();
        if (iat != null && iat.toInstant().minus(CLOCK_SKEW).isAfter(now)) {
            throw new AuthenticationException("JWT issued in the future (iat " + iat.toInstant() + ")");
        }
    }

    public static String quoted(String s) {
        return s == null ? "(none)" : "\"" + s + "\"";
    }
}

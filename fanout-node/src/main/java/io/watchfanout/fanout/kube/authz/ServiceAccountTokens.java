package io.watchfanout.fanout.kube.authz;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.SignedJWT;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Authenticator;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.NodeSecurity;
import io.watchfanout.fanout.security.SignedTokens;
import io.watchfanout.fanout.security.TokenKind;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.text.ParseException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1Null;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.DERNull;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.asn1.x9.ECNamedCurveTable;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * kube-apiserver's ServiceAccount tokens (pkg/serviceaccount): JWTs signed by a key of
 * {@code --service-account-key-file} (PEM public keys, or private keys whose public half is
 * used, several files and keys), issued by one of {@code --service-account-issuer} for one of
 * {@code --api-audiences} (bound tokens), or legacy Secret-based tokens (issuer
 * {@code kubernetes/serviceaccount}, no expiry). The identity is kube-apiserver's:
 * {@code system:serviceaccount:<namespace>:<name>} in the groups {@code system:serviceaccounts},
 * {@code system:serviceaccounts:<namespace>} and {@code system:authenticated}.
 *
 * <p>A token stays valid only while what it was issued for exists: its ServiceAccount with the
 * same UID, and the Pod or Secret it is bound to (a bound token), or the Secret that holds it (a
 * legacy token), which the node reads from its cache through {@link Lookup}. A token of another
 * issuer is not this authenticator's (null: the next is asked).
 *
 * <p>Thread-safe: the keys are immutable once read.
 */
public final class ServiceAccountTokens implements Authenticator {
    /** The issuer of legacy, Secret-based tokens. */
    public static final String LEGACY_ISSUER = "kubernetes/serviceaccount";

    private static final Set<JWSAlgorithm> ALGORITHMS = Set.of(
            JWSAlgorithm.RS256,
            JWSAlgorithm.RS384,
            JWSAlgorithm.RS512,
            JWSAlgorithm.ES256,
            JWSAlgorithm.ES384,
            JWSAlgorithm.ES512);
    private static final String KEY_SOURCE = "--service-account-key-file";
    private static final String LEGACY = "kubernetes.io/serviceaccount/";

    /** The objects a token depends on, as the node's cache holds them. */
    public interface Lookup {
        /**
         * The UID of the object, or null when it does not exist.
         *
         * @param resource {@code serviceaccounts}, {@code pods} or {@code secrets}
         */
        String uid(String resource, String namespace, String name);

        /**
         * The {@code token} entry of the Secret's {@code data}, the server's copy of a legacy
         * token; null when the Secret or the entry does not exist.
         */
        byte[] secretToken(String namespace, String name);

        /** A lookup for a node that holds no Kubernetes objects: nothing exists. */
        static Lookup nothing() {
            return new Lookup() {
                @Override
                public String uid(String resource, String namespace, String name) {
                    return null;
                }

                @Override
                public byte[] secretToken(String namespace, String name) {
                    return null;
                }
            };
        }
    }

    private final List<SignedTokens.VerificationKey> keys;
    private final Set<String> issuers;
    private final Set<String> audiences;
    private final Lookup lookup;
    private final Clock clock;

    /**
     * How the node reads this authenticator from its flags ({@code --service-account-key-file},
     * {@code --service-account-issuer}, {@code --api-audiences}), checking tokens against {@code objects}.
     *
     * @param objects the node's cache of kube-apiserver's objects
     */
    public static NodeSecurity.ServiceAccountAuthenticator reading(Lookup objects) {
        return flags -> new ServiceAccountTokens(
                flags.serviceAccountKeyFiles(),
                flags.serviceAccountIssuers(),
                flags.apiAudiences(),
                objects,
                Clock.systemUTC());
    }

    /**
     * @param keyFiles PEM files of public keys (or private keys)
     * @param issuers accepted issuers of bound tokens ({@code --service-account-issuer})
     * @param audiences accepted audiences ({@code --api-audiences}; kube-apiserver defaults them to
     *     the issuers)
     * @throws IOException when a file cannot be read or holds no usable key
     */
    public ServiceAccountTokens(
            List<Path> keyFiles, List<String> issuers, List<String> audiences, Lookup lookup, Clock clock)
            throws IOException {
        List<SignedTokens.VerificationKey> all = new ArrayList<>();
        for (Path file : keyFiles) {
            all.addAll(read(file));
        }
        this.keys = List.copyOf(all);
        this.issuers = Set.copyOf(issuers);
        this.audiences = Set.copyOf(audiences.isEmpty() ? issuers : audiences);
        this.lookup = Objects.requireNonNull(lookup, "lookup");
        this.clock = clock;
    }

    @Override
    public Identity authenticate(Credentials credentials) throws AuthenticationException {
        String token = credentials.token();
        if (token == null || TokenKind.of(token) != TokenKind.JWT) {
            return null;
        }
        String issuer = unverifiedIssuer(token);
        if (issuer == null) {
            return null;
        }
        boolean legacy = LEGACY_ISSUER.equals(issuer);
        if (!legacy && !issuers.contains(issuer)) {
            return null;
        }
        SignedJWT jwt = SignedTokens.signed(token, ALGORITHMS);
        // kube-apiserver tries every key of --service-account-key-file: a key id is only a hint.
        SignedTokens.verify(jwt, keys, KEY_SOURCE, true);
        JWTClaimsSet claims = SignedTokens.claims(jwt);
        SignedTokens.checkTimes(claims, clock.instant(), legacy);
        return legacy ? legacy(claims, token) : bound(claims);
    }

    private Identity bound(JWTClaimsSet claims) throws AuthenticationException {
        if (claims.getAudience() == null || claims.getAudience().stream().noneMatch(audiences::contains)) {
            throw new AuthenticationException("service account token audience " + claims.getAudience()
                    + " is not one of " + audiences + " (--api-audiences)");
        }
        Map<String, Object> k8s = object(claims.getClaim("kubernetes.io"), "kubernetes.io");
        String namespace = text(k8s.get("namespace"), "kubernetes.io.namespace");
        Map<String, Object> sa = object(k8s.get("serviceaccount"), "kubernetes.io.serviceaccount");
        String name = text(sa.get("name"), "kubernetes.io.serviceaccount.name");
        requireLive("serviceaccounts", namespace, name, (String) sa.get("uid"));
        for (String bound : List.of("pod", "secret")) {
            if (k8s.get(bound) != null) {
                Map<String, Object> ref = object(k8s.get(bound), "kubernetes.io." + bound);
                requireLive(bound + "s", namespace, text(ref.get("name"), "kubernetes.io." + bound + ".name"), (String)
                        ref.get("uid"));
            }
        }
        return identity(claims, namespace, name);
    }

    /**
     * A legacy token is the ServiceAccount's while its Secret exists and still holds this very
     * token: kube-apiserver's legacy validator refuses one that does not match the server's copy
     * (the token controller rewrote the Secret, or another Secret took its name).
     */
    private Identity legacy(JWTClaimsSet claims, String token) throws AuthenticationException {
        String namespace = text(claims.getClaim(LEGACY + "namespace"), LEGACY + "namespace");
        String name = text(claims.getClaim(LEGACY + "service-account.name"), LEGACY + "service-account.name");
        String secret = text(claims.getClaim(LEGACY + "secret.name"), LEGACY + "secret.name");
        requireLive("secrets", namespace, secret, null);
        byte[] copy = lookup.secretToken(namespace, secret);
        if (copy == null || !MessageDigest.isEqual(copy, token.getBytes(StandardCharsets.UTF_8))) {
            throw new AuthenticationException(
                    "service account token does not match the copy in secrets " + namespace + "/" + secret);
        }
        requireLive("serviceaccounts", namespace, name, (String) claims.getClaim(LEGACY + "service-account.uid"));
        return identity(claims, namespace, name);
    }

    private static Identity identity(JWTClaimsSet claims, String namespace, String name)
            throws AuthenticationException {
        String user = "system:serviceaccount:" + namespace + ":" + name;
        if (claims.getSubject() != null && !claims.getSubject().equals(user)) {
            throw new AuthenticationException("service account token subject "
                    + SignedTokens.quoted(claims.getSubject()) + " does not match its claims (" + user + ")");
        }
        Set<String> groups = new LinkedHashSet<>(
                List.of("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"));
        return new Identity(user, groups, Identity.Method.SERVICE_ACCOUNT);
    }

    private void requireLive(String resource, String namespace, String name, String uid)
            throws AuthenticationException {
        String current = lookup.uid(resource, namespace, name);
        if (current == null) {
            throw new AuthenticationException("service account token refers to " + resource + " " + namespace + "/"
                    + name + ", which no longer exists");
        }
        if (uid != null && !uid.isEmpty() && !uid.equals(current)) {
            throw new AuthenticationException("service account token refers to " + resource + " " + namespace + "/"
                    + name + " with UID " + uid + ", which has been recreated (UID " + current + ")");
        }
    }

    /** The issuer claim, read before the signature is checked, only to pick the authenticator. */
    private static String unverifiedIssuer(String token) {
        try {
            return JWTParser.parse(token).getJWTClaimsSet().getIssuer();
        } catch (ParseException | ClassCastException e) {
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object value, String claim) throws AuthenticationException {
        if (!(value instanceof Map<?, ?> map)) {
            throw new AuthenticationException("service account token has no object claim " + claim);
        }
        return (Map<String, Object>) map;
    }

    private static String text(Object value, String claim) throws AuthenticationException {
        if (!(value instanceof String s) || s.isEmpty()) {
            throw new AuthenticationException("service account token has no string claim " + claim);
        }
        return s;
    }

    /** Reads every key of a PEM file, with kube-apiserver's key id (unpadded base64url of the SHA-256 of its DER form). */
    static List<SignedTokens.VerificationKey> read(Path file) throws IOException {
        List<SignedTokens.VerificationKey> out = new ArrayList<>();
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.US_ASCII);
                PEMParser pem = new PEMParser(reader)) {
            Object o;
            while ((o = pem.readObject()) != null) {
                SubjectPublicKeyInfo info = null;
                if (o instanceof SubjectPublicKeyInfo spki) {
                    info = spki;
                } else if (o instanceof PEMKeyPair pair) {
                    // An "EC PRIVATE KEY" without its optional public key has none to give.
                    info = pair.getPublicKeyInfo() != null
                            ? pair.getPublicKeyInfo()
                            : publicHalf(pair.getPrivateKeyInfo());
                } else if (o instanceof X509CertificateHolder cert) {
                    info = cert.getSubjectPublicKeyInfo();
                } else if (o instanceof PrivateKeyInfo privateKey) {
                    info = publicHalf(privateKey);
                }
                if (info == null) {
                    continue;
                }
                PublicKey key = converter.getPublicKey(info);
                String kid = Base64.getUrlEncoder()
                        .withoutPadding()
                        .encodeToString(MessageDigest.getInstance("SHA-256").digest(info.getEncoded()));
                if (key instanceof RSAPublicKey rsa) {
                    for (JWSAlgorithm alg : List.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384, JWSAlgorithm.RS512)) {
                        out.add(new SignedTokens.VerificationKey(kid, alg, new RSASSAVerifier(rsa)));
                    }
                } else if (key instanceof ECPublicKey ec) {
                    JWSAlgorithm alg =
                            switch (ec.getParams().getCurve().getField().getFieldSize()) {
                                case 256 -> JWSAlgorithm.ES256;
                                case 384 -> JWSAlgorithm.ES384;
                                default -> JWSAlgorithm.ES512;
                            };
                    out.add(new SignedTokens.VerificationKey(kid, alg, new ECDSAVerifier(ec)));
                }
            }
        } catch (JOSEException | NoSuchAlgorithmException | IllegalArgumentException e) {
            throw new IOException(KEY_SOURCE + " " + file + ": " + e.getMessage(), e);
        }
        if (out.isEmpty()) {
            throw new IOException(KEY_SOURCE + " " + file + ": no RSA or EC key in PEM form");
        }
        return out;
    }

    /** The public key of a PKCS#8 private key ({@code PRIVATE KEY}), as Go's {@code Public()} gives it. */
    private static SubjectPublicKeyInfo publicHalf(PrivateKeyInfo key) throws IOException {
        AlgorithmIdentifier algorithm = key.getPrivateKeyAlgorithm();
        if (algorithm.getAlgorithm().equals(PKCSObjectIdentifiers.rsaEncryption)) {
            org.bouncycastle.asn1.pkcs.RSAPrivateKey rsa =
                    org.bouncycastle.asn1.pkcs.RSAPrivateKey.getInstance(key.parsePrivateKey());
            return new SubjectPublicKeyInfo(
                    new AlgorithmIdentifier(PKCSObjectIdentifiers.rsaEncryption, DERNull.INSTANCE),
                    new org.bouncycastle.asn1.pkcs.RSAPublicKey(rsa.getModulus(), rsa.getPublicExponent()));
        }
        if (algorithm.getAlgorithm().equals(X9ObjectIdentifiers.id_ecPublicKey)) {
            org.bouncycastle.asn1.sec.ECPrivateKey ec =
                    org.bouncycastle.asn1.sec.ECPrivateKey.getInstance(key.parsePrivateKey());
            // The curve is named in the algorithm's parameters (PKCS#8) or in the key's own (SEC 1).
            ASN1Encodable parameters = algorithm.getParameters();
            if (parameters == null || parameters instanceof ASN1Null) {
                parameters = ec.getParametersObject();
            }
            if (!(parameters instanceof ASN1ObjectIdentifier curveId)) {
                return null;
            }
            AlgorithmIdentifier named = new AlgorithmIdentifier(X9ObjectIdentifiers.id_ecPublicKey, curveId);
            if (ec.getPublicKey() != null) {
                return new SubjectPublicKeyInfo(named, ec.getPublicKey().getBytes());
            }
            X9ECParameters curve = ECNamedCurveTable.getByOID(curveId);
            if (curve == null) {
                return null;
            }
            return new SubjectPublicKeyInfo(
                    named, curve.getG().multiply(ec.getKey()).normalize().getEncoded(false));
        }
        return null;
    }

    @Override
    public String name() {
        return "serviceaccount";
    }
}

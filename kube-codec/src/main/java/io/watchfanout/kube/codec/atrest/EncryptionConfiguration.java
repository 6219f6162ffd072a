package io.watchfanout.kube.codec.atrest;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * kube-apiserver's {@code --encryption-provider-config} file ({@code apiserver.config.k8s.io/v1}
 * {@code EncryptionConfiguration}, YAML or JSON), read for decrypting what kube-apiserver stored:
 * for each list of resources ({@code secrets}, {@code deployments.apps}, {@code *.apps},
 * {@code *.*}), its providers in order ({@code aescbc}, {@code aesgcm}, {@code secretbox} with
 * named base64 keys; {@code identity}; {@code kms}, which the node cannot use and reports).
 *
 * <p>Immutable once parsed; equal when the same providers and keys are configured, so that a
 * reload that changes nothing changes nothing.
 *
 * @param rules the resource lists and their providers, in the file's order
 */
public record EncryptionConfiguration(List<Rule> rules) {

    /** The providers of some resources. */
    public record Rule(List<String> resources, List<Provider> providers) {}

    /**
     * One provider: its kind ({@code aescbc}, {@code aesgcm}, {@code secretbox}, {@code identity},
     * {@code kms}) and its keys by name; a KMS provider's name is in {@code kmsName}.
     */
    public record Provider(String kind, Map<String, Key> keys, String kmsName) {}

    /** A key's bytes (16, 24 or 32 for AES; 32 for secretbox). */
    public record Key(byte[] secret) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && Arrays.equals(secret, k.secret);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(secret);
        }

        @Override
        public String toString() {
            return "Key[" + secret.length + " bytes]";
        }
    }

    /**
     * Reads and checks the file.
     *
     * @throws IOException naming the file and what is wrong in it (a bad kind, a key that is not
     *     base64 or of the wrong size, an unknown provider)
     */
    public static EncryptionConfiguration read(Path file) throws IOException {
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
            return parse(doc);
        } catch (YAMLException | IllegalArgumentException | ClassCastException e) {
            throw new IOException("--encryption-provider-config " + file + ": " + e.getMessage(), e);
        }
    }

    @SuppressWarnings("unchecked")
    static EncryptionConfiguration parse(Object doc) {
        if (!(doc instanceof Map<?, ?> top)) {
            throw new IllegalArgumentException("not an EncryptionConfiguration (expected: a YAML or JSON object)");
        }
        Object kind = top.get("kind");
        if (!"EncryptionConfiguration".equals(kind)) {
            throw new IllegalArgumentException("kind: " + kind + " (expected: EncryptionConfiguration)");
        }
        List<Rule> rules = new ArrayList<>();
        for (Object r : list(top.get("resources"), "resources")) {
            Map<String, Object> rule = (Map<String, Object>) r;
            List<String> resources = new ArrayList<>();
            for (Object name : list(rule.get("resources"), "resources[].resources")) {
                resources.add(String.valueOf(name));
            }
            List<Provider> providers = new ArrayList<>();
            for (Object p : list(rule.get("providers"), "resources[].providers")) {
                Map<String, Object> provider = (Map<String, Object>) p;
                if (provider.size() != 1) {
                    throw new IllegalArgumentException("a provider names exactly one of aescbc, aesgcm, secretbox,"
                            + " identity, kms (got " + provider.keySet() + ")");
                }
                Map.Entry<String, Object> only = provider.entrySet().iterator().next();
                providers.add(provider(only.getKey(), (Map<String, Object>) only.getValue()));
            }
            if (providers.isEmpty()) {
                throw new IllegalArgumentException("resources " + resources + " have no provider");
            }
            rules.add(new Rule(List.copyOf(resources), List.copyOf(providers)));
        }
        return new EncryptionConfiguration(List.copyOf(rules));
    }

    @SuppressWarnings("unchecked")
    private static Provider provider(String kind, Map<String, Object> config) {
        switch (kind) {
            case "identity" -> {
                return new Provider(kind, Map.of(), "");
            }
            case "kms" -> {
                return new Provider(kind, Map.of(), config == null ? "" : String.valueOf(config.get("name")));
            }
            case "aescbc", "aesgcm", "secretbox" -> {
                Map<String, Key> keys = new LinkedHashMap<>();
                for (Object k : list(config == null ? null : config.get("keys"), kind + ".keys")) {
                    Map<String, Object> key = (Map<String, Object>) k;
                    String name = String.valueOf(key.get("name"));
                    byte[] secret;
                    try {
                        secret = Base64.getDecoder().decode(String.valueOf(key.get("secret")));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(kind + " key " + name + ": secret is not base64");
                    }
                    boolean sizeOk = kind.equals("secretbox")
                            ? secret.length == 32
                            : secret.length == 16 || secret.length == 24 || secret.length == 32;
                    if (!sizeOk) {
                        throw new IllegalArgumentException(kind + " key " + name + ": " + secret.length
                                + " bytes (expected: " + (kind.equals("secretbox") ? "32" : "16, 24 or 32") + ")");
                    }
                    keys.put(name, new Key(secret));
                }
                if (keys.isEmpty()) {
                    throw new IllegalArgumentException(kind + " has no keys");
                }
                return new Provider(kind, Map.copyOf(keys), "");
            }
            default ->
                throw new IllegalArgumentException(
                        "unknown provider " + kind + " (expected: aescbc, aesgcm, secretbox, identity, kms)");
        }
    }

    private static List<?> list(Object value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + " is missing");
        }
        if (!(value instanceof List<?> l)) {
            throw new IllegalArgumentException(what + " is not a list");
        }
        return l;
    }
}

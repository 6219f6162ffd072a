package io.watchfanout.fanout.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

/**
 * An {@link AccessControl} for the front ends' tests: a policy file the test writes and
 * rewrites, and fixed bearer tokens on both listeners ({@link #ALICE} and {@link #BOB}; any
 * other bearer token is refused); no anonymous access. {@link #reload()} applies a rewritten
 * policy at once.
 */
public final class TestAccess {
    /** alice's bearer token. */
    public static final String ALICE = "alice-secret";
    /** bob's bearer token. */
    public static final String BOB = "bob-secret";

    private static final Map<String, String> TOKENS = Map.of(ALICE, "alice", BOB, "bob");

    private static final Authenticator TOKENS_AUTHENTICATOR = new Authenticator() {
        @Override
        public Identity authenticate(Credentials c) throws AuthenticationException {
            String token = c.token();
            if (token == null) {
                return null;
            }
            String name = TOKENS.get(token);
            if (name == null) {
                throw new AuthenticationException("unknown bearer token");
            }
            return Identity.of(name, Identity.Method.TOKEN);
        }

        @Override
        public String name() {
            return "token";
        }
    };

    private final Path policy;
    private final AccessControl access;

    private TestAccess(Path policy, AccessControl access) {
        this.policy = policy;
        this.access = access;
    }

    /**
     * @param policy where the policy file goes
     * @param rules the policy's rules, e.g. {@link #rule}s joined by commas
     */
    public static TestAccess create(Path policy, String rules, WatchLimits limits) throws IOException {
        write(policy, rules);
        AccessControl access = AccessControl.builder("test")
                .authenticators(Listener.HTTP, List.of(TOKENS_AUTHENTICATOR))
                .authenticators(Listener.ETCD_API, List.of(TOKENS_AUTHENTICATOR))
                .policy(new PolicyFile(policy))
                .limits(limits)
                .build();
        return new TestAccess(policy, access);
    }

    /** A rule granting {@code subject} watch and read on {@code prefix}. */
    public static String rule(String subject, String prefix) {
        return "{\"subjects\": [\"" + subject + "\"], \"verbs\": [\"watch\", \"read\"], \"prefixes\": [\"" + prefix
                + "\"]}";
    }

    /** The access control. */
    public AccessControl access() {
        return access;
    }

    /** Rewrites the policy and applies it now (as the security thread would within a second). */
    public void replacePolicy(String rules) throws IOException {
        write(policy, rules);
        access.reloadNow();
    }

    private static void write(Path policy, String rules) throws IOException {
        Path tmp = policy.resolveSibling(policy.getFileName() + ".tmp");
        Files.writeString(tmp, "{\"rules\": [" + rules + "]}");
        Files.move(tmp, policy, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}

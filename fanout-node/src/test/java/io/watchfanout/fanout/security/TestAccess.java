package io.watchfanout.fanout.security;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * An {@link AccessControl} for the front ends' tests: a policy file the test writes and
 * rewrites, and the node's {@code --token-auth-file} authenticator ({@link TokenFile}) on both
 * listeners, with a token file ({@code tokens.csv} beside the policy) holding {@link #ALICE}'s
 * and {@link #BOB}'s tokens; no anonymous access. {@link #replacePolicy} applies a rewritten
 * policy at once.
 */
public final class TestAccess {
    /** alice's bearer token. */
    public static final String ALICE = "alice-secret";
    /** bob's bearer token. */
    public static final String BOB = "bob-secret";

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
        Path tokenFile = policy.resolveSibling("tokens.csv");
        Files.writeString(tokenFile, ALICE + ",alice,1001\n" + BOB + ",bob,1002\n");
        TokenFile tokens = new TokenFile(tokenFile);
        AccessControl access = AccessControl.builder("test")
                .authenticators(Listener.HTTP, List.of(tokens))
                .authenticators(Listener.ETCD_API, List.of(tokens))
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

package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccessControlTest {
    private static final KeyRange CONFIGMAPS = KeyRange.prefix(ByteString.copyFromUtf8("/registry/configmaps/"));
    private static final Identity ALICE = Identity.of("alice", Identity.Method.TOKEN);
    private static final Identity BOB = Identity.of("bob", Identity.Method.TOKEN);

    @TempDir
    Path dir;

    /** Bearer tokens equal to the user's name. */
    private static final Authenticator NAMES = new Authenticator() {
        @Override
        public Identity authenticate(Credentials c) throws AuthenticationException {
            String token = c.token();
            if (token == null) {
                return null;
            }
            if (Map.of("alice", 1, "bob", 1).containsKey(token)) {
                return Identity.of(token, Identity.Method.TOKEN);
            }
            throw new AuthenticationException("unknown bearer token");
        }

        @Override
        public String name() {
            return "token";
        }
    };

    private Path policy(String subjects) throws Exception {
        Path p = dir.resolve("policy.json");
        Files.writeString(
                p.resolveSibling("policy.tmp"),
                "{\"rules\": [{\"subjects\": [" + subjects
                        + "], \"verbs\": [\"watch\", \"read\"], \"prefixes\": [\"/registry/configmaps/\"]}]}");
        Files.move(
                p.resolveSibling("policy.tmp"),
                p,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return p;
    }

    private AccessControl control(WatchLimits limits, AtomicLong clock) throws Exception {
        return AccessControl.builder("n1")
                .authenticators(Listener.HTTP, List.of(NAMES))
                .policy(new PolicyFile(policy("\"alice\", \"bob\"")))
                .limits(limits)
                .nanoClock(clock::get)
                .build();
    }

    @Test
    void anOpenNodeServesEveryoneAsAnonymous() throws Exception {
        AccessControl open = AccessControl.open("n1", WatchLimits.NONE);
        assertThat(open.isOpen()).isTrue();
        assertThat(open.authenticate(Listener.HTTP, Credentials.NONE, "http")).isEqualTo(Identity.ANONYMOUS);
        assertThat(open.admitWatch(Identity.ANONYMOUS, KeyRange.all(), "http")).isNotNull();
    }

    @Test
    void withoutAnonymousNoCredentialsAndBadOnesAreRefused() throws Exception {
        AccessControl c = control(WatchLimits.NONE, new AtomicLong());
        assertThatThrownBy(() -> c.authenticate(Listener.HTTP, Credentials.NONE, "http"))
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining("no credentials (expected: Authorization: Bearer <token>)");
        assertThatThrownBy(() -> c.authenticate(Listener.HTTP, new Credentials(null, "Bearer mallory", null), "http"))
                .hasMessage("unknown bearer token");
        assertThatThrownBy(() -> c.authenticate(Listener.HTTP, new Credentials(null, "Basic YTpi", null), "http"))
                .hasMessageContaining("expected \"Bearer <token>\"");
        assertThat(c.authenticate(Listener.HTTP, new Credentials(null, "Bearer alice", null), "http")
                        .groups())
                .containsExactly("system:authenticated");
        // The etcd port has no authenticator here: a token there is refused, not served as anonymous.
        assertThatThrownBy(() -> c.authenticate(Listener.ETCD_API, new Credentials(null, null, "alice"), "etcd"))
                .isInstanceOf(AuthenticationException.class);
    }

    @Test
    void anonymousIsServedOnlyWithoutCredentials() throws Exception {
        AccessControl c = AccessControl.builder("n1")
                .authenticators(Listener.HTTP, List.of(NAMES))
                .anonymous(true)
                .policy(AccessPolicy.ALLOW_ALL)
                .build();
        assertThat(c.authenticate(Listener.HTTP, Credentials.NONE, "http")).isEqualTo(Identity.ANONYMOUS);
        assertThatThrownBy(() -> c.authenticate(Listener.HTTP, new Credentials(null, "Bearer mallory", null), "http"))
                .isInstanceOf(AuthenticationException.class);
        assertThatThrownBy(() -> c.authenticate(Listener.HTTP, new Credentials(null, "Bearer", null), "http"))
                .isInstanceOf(AuthenticationException.class);
    }

    @Test
    void theWholeNormalisedRangeMustBeAllowed() throws Exception {
        AccessControl c = control(WatchLimits.NONE, new AtomicLong());
        c.authorize(ALICE, Verb.READ, CONFIGMAPS, "http");
        c.authorize(ALICE, Verb.READ, KeyRange.single(ByteString.copyFromUtf8("/registry/configmaps/a")), "http");
        for (KeyRange wider : List.of(
                KeyRange.prefix(ByteString.copyFromUtf8("/registry/")),
                KeyRange.of(ByteString.copyFromUtf8("/registry/configmaps/"), ByteString.copyFrom(new byte[] {0})),
                KeyRange.of(ByteString.copyFromUtf8("/registry/configmaps/x"), ByteString.copyFromUtf8("/registry/d")),
                KeyRange.all())) {
            assertThatThrownBy(() -> c.authorize(ALICE, Verb.WATCH, wider, "http"))
                    .isInstanceOf(AccessDeniedException.class)
                    .hasMessageContaining("alice may not watch");
        }
        assertThatThrownBy(() -> c.authorize(ALICE, Verb.WRITE, CONFIGMAPS, "http"))
                .isInstanceOf(AccessDeniedException.class);
    }

    @Test
    void anIdentityGetsAtMostItsWatchesAndOthersGoOn() throws Exception {
        AccessControl c = control(new WatchLimits(0, 3, 0, 0), new AtomicLong());
        List<WatchGrant> alice = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            alice.add(c.admitWatch(ALICE, CONFIGMAPS, "http"));
        }
        assertThatThrownBy(() -> c.admitWatch(ALICE, CONFIGMAPS, "http"))
                .isInstanceOfSatisfying(
                        LimitExceededException.class,
                        e -> assertThat(e.retryAfterSeconds()).isPositive())
                .hasMessageContaining("--max-watchers-per-identity");
        assertThat(c.admitWatch(BOB, CONFIGMAPS, "http")).isNotNull();
        alice.get(0).end("client-closed", 3);
        alice.get(0).end("client-closed", 3);
        assertThat(c.admitWatch(ALICE, CONFIGMAPS, "http")).isNotNull();
        assertThat(c.grants()).isEqualTo(4);
    }

    @Test
    void theNodeLimitRefusesEveryoneAtIt() throws Exception {
        AccessControl c = control(new WatchLimits(2, 0, 0, 0), new AtomicLong());
        WatchGrant first = c.admitWatch(ALICE, CONFIGMAPS, "http");
        c.admitWatch(BOB, CONFIGMAPS, "http");
        assertThatThrownBy(() -> c.admitWatch(BOB, CONFIGMAPS, "http"))
                .isInstanceOf(LimitExceededException.class)
                .hasMessageContaining("--max-watchers 2");
        first.end("client-closed", 0);
        assertThat(c.admitWatch(BOB, CONFIGMAPS, "http")).isNotNull();
    }

    @Test
    void newWatchesPerSecondAreATokenBucket() throws Exception {
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        AccessControl c = control(new WatchLimits(0, 0, 2, 2), clock);
        c.admitWatch(ALICE, CONFIGMAPS, "http");
        c.admitWatch(ALICE, CONFIGMAPS, "http");
        assertThatThrownBy(() -> c.admitWatch(ALICE, CONFIGMAPS, "http"))
                .isInstanceOfSatisfying(
                        LimitExceededException.class,
                        e -> assertThat(e.retryAfterSeconds()).isEqualTo(1));
        assertThat(c.admitWatch(BOB, CONFIGMAPS, "http")).isNotNull();
        clock.addAndGet(500_000_000L);
        assertThat(c.admitWatch(ALICE, CONFIGMAPS, "http")).isNotNull();
    }

    @Test
    void aPolicyReloadRevokesTheWatchesItNoLongerAllowsOnly() throws Exception {
        AccessControl c = control(WatchLimits.NONE, new AtomicLong());
        WatchGrant alice = c.admitWatch(ALICE, CONFIGMAPS, "http");
        WatchGrant bob = c.admitWatch(BOB, CONFIGMAPS, "http");
        List<String> revoked = new ArrayList<>();
        alice.onRevoked(r -> revoked.add("alice: " + r));
        bob.onRevoked(r -> revoked.add("bob: " + r));
        policy("\"bob\"");
        Files.setLastModifiedTime(
                dir.resolve("policy.json"),
                java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
        c.reloadNow();
        assertThat(revoked).containsExactly("alice: the policy no longer allows alice to watch " + CONFIGMAPS);
        List<String> late = new ArrayList<>();
        alice.onRevoked(late::add);
        assertThat(late).hasSize(1);
        alice.end("forbidden", 0);
        assertThat(c.grants()).isEqualTo(1);
        // A broken file keeps the rules in force.
        Files.writeString(dir.resolve("policy.json"), "{\"rules\": [");
        c.reloadNow();
        c.authorize(BOB, Verb.WATCH, CONFIGMAPS, "http");
    }

    @Test
    void theNodesOwnPolicyLeavesAKubernetesWatchToItsOwnAuthorizers() throws Exception {
        AccessControl access = AccessControl.builder("n1")
                .anonymous(false)
                .policy(AccessPolicy.DENY_ALL)
                .build();
        RequestAttributes watch =
                new RequestAttributes("alice", List.of(), "watch", "", "secrets", "", "shop", "", "", true);
        AtomicReference<String> denial = new AtomicReference<>();
        WatchGrant grant = access.admitWatch(ALICE, CONFIGMAPS, "kube-read", new WatchAuthorization() {
            @Override
            public RequestAttributes request() {
                return watch;
            }

            @Override
            public String recheck() {
                return denial.get();
            }
        });
        List<String> revoked = new ArrayList<>();
        grant.onRevoked(revoked::add);
        // Deny-all would revoke any other watch; a Kubernetes watch is decided by its recheck alone.
        access.revalidate();
        assertThat(access.recheckKubernetesWatches()).isZero();
        assertThat(revoked).isEmpty();

        denial.set("no longer allowed");
        assertThat(access.recheckKubernetesWatches()).isEqualTo(1);
        assertThat(revoked).containsExactly("no longer allowed");
        grant.end("forbidden", 0);
        assertThat(access.grants()).isZero();
    }
}

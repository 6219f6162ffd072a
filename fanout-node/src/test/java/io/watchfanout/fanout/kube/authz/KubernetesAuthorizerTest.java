package io.watchfanout.fanout.kube.authz;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessPolicy;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.fanout.security.SecurityConfig;
import io.watchfanout.fanout.security.WatchAuthorization;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.security.WatchLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@code --authorization-mode}: kube-apiserver's modes in order, the first to allow deciding, the
 * denial in its words with the authorizers' reasons; the flags' checks; Kubernetes watches decided
 * again on a policy change, revoked with the new denial.
 */
class KubernetesAuthorizerTest {
    private static final Rbac.Rule READ_SECRETS =
            new Rbac.Rule(Set.of("get", "list", "watch"), Set.of(""), Set.of("secrets"), Set.of(), Set.of());

    private static Rbac janeReadsSecretsIn(String namespace) {
        return new Rbac(
                Map.of(),
                Map.of(namespace + "/reader", List.of(READ_SECRETS)),
                List.of(new Rbac.Binding(
                        namespace, "b", "Role", "reader", List.of(new Rbac.Subject("User", "jane", "")))));
    }

    private static RequestAttributes request(String user, List<String> groups, String verb, String ns, String name) {
        return new RequestAttributes(user, groups, verb, "", "secrets", "", ns, name, "", true);
    }

    @Test
    void theFirstModeThatAllowsDecidesAndADenialIsInKubeApiserversWords() {
        NodeGraph graph = new NodeGraph();
        graph.pod("shop", "web-0", NodeGraph.links("node-1", List.of("db"), List.of(), List.of()));
        NodeAuthorizer node = new NodeAuthorizer(graph);
        KubernetesAuthorizer nodeRbac =
                new KubernetesAuthorizer(List.of("Node", "RBAC"), () -> janeReadsSecretsIn("shop"), node);

        assertThat(nodeRbac.denial(request("jane", List.of(), "list", "shop", ""), null))
                .isNull();
        assertThat(nodeRbac.denial(request("jane", List.of(), "list", "prod", ""), null))
                .isEqualTo(
                        "User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"prod\"");
        List<String> kubelet = List.of("system:nodes", "system:authenticated");
        assertThat(nodeRbac.denial(request("system:node:node-1", kubelet, "get", "shop", "db"), null))
                .isNull();
        assertThat(nodeRbac.denial(request("system:node:node-1", kubelet, "get", "shop", "other"), null))
                .isEqualTo("User \"system:node:node-1\" cannot get resource \"secrets\" in API group \"\" in the "
                        + "namespace \"shop\": no relationship found between node 'node-1' and this object");
        assertThat(nodeRbac.denial(request("system:node:node-1", kubelet, "list", "shop", ""), null))
                .endsWith(": can only list individual resources of this type");
        RequestAttributes version =
                new RequestAttributes("jane", List.of(), "get", "", "", "", "", "", "/version", false);
        assertThat(nodeRbac.denial(version, null)).isEqualTo("User \"jane\" cannot get path \"/version\"");

        // AlwaysAllow only when named, and only where the order reaches it; AlwaysDeny gives its reason.
        assertThat(new KubernetesAuthorizer(List.of("RBAC", "AlwaysAllow"), () -> janeReadsSecretsIn("shop"), node)
                        .denial(request("bob", List.of(), "list", "prod", ""), null))
                .isNull();
        assertThat(new KubernetesAuthorizer(List.of("AlwaysDeny", "RBAC"), () -> janeReadsSecretsIn("shop"), node)
                        .denial(request("jane", List.of(), "list", "shop", ""), null))
                .isNull();
        assertThat(new KubernetesAuthorizer(List.of("AlwaysDeny"), () -> janeReadsSecretsIn("shop"), node)
                        .denial(request("jane", List.of(), "list", "shop", ""), null))
                .endsWith(": Everything is forbidden.");
    }

    @Test
    void theFlagsAreCheckedTogether() {
        assertThat(config(List.of("Node", "RBAC"), List.of(), List.of()).problem(false))
                .isNull();
        assertThat(config(List.of("Webhook"), List.of(), List.of()).problem(false))
                .contains("--authorization-mode: \"Webhook\" is not available here");
        assertThat(config(List.of("RBAC", "RBAC"), List.of(), List.of()).problem(false))
                .contains("\"RBAC\" is given twice");
        assertThat(config(List.of("RBAC"), List.of(java.nio.file.Path.of("sa.pub")), List.of())
                        .problem(false))
                .isEqualTo("--service-account-key-file needs --service-account-issuer (as kube-apiserver)");
        assertThat(config(List.of("RBAC"), List.of(), List.of("https://issuer")).problem(false))
                .isEqualTo("--service-account-issuer and --api-audiences need --service-account-key-file");
        // Authentication with --authorization-mode alone is enough: /v1 and the etcd API then serve nobody.
        assertThat(config(List.of(), List.of(), List.of()).problem(false)).contains("authentication without --authz");
    }

    private static SecurityConfig config(List<String> modes, List<java.nio.file.Path> keyFiles, List<String> issuers) {
        return new SecurityConfig(
                false,
                true,
                null,
                SecurityConfig.Jwt.NONE,
                false,
                List.of(),
                List.of(),
                null,
                Duration.ofSeconds(5),
                WatchLimits.NONE,
                new SecurityConfig.Kubernetes(keyFiles, issuers, List.of(), modes, null, null));
    }

    @Test
    void aKubernetesWatchIsDecidedAgainWhenThePolicyChangesAndRevokedWithTheNewDenial() throws Exception {
        AtomicReference<Rbac> rbac = new AtomicReference<>(janeReadsSecretsIn("shop"));
        KubernetesAuthorizer authorizer =
                new KubernetesAuthorizer(List.of("RBAC"), rbac::get, new NodeAuthorizer(new NodeGraph()));
        AccessControl access = AccessControl.builder("n1")
                .anonymous(false)
                .policy(AccessPolicy.DENY_ALL)
                .build();
        Identity jane = Identity.of("jane", Identity.Method.CERTIFICATE);
        RequestAttributes watch = request("jane", List.of(), "watch", "shop", "");
        KeyRange range = KeyRange.prefix(ByteString.copyFromUtf8("/registry/secrets/shop/"));
        WatchGrant grant = access.admitWatch(jane, range, "kube-read", new WatchAuthorization() {
            @Override
            public RequestAttributes request() {
                return watch;
            }

            @Override
            public String recheck() {
                return authorizer.denial(watch, null);
            }
        });
        List<String> revoked = new ArrayList<>();
        grant.onRevoked(revoked::add);
        assertThat(access.recheckKubernetesWatches()).isZero();
        assertThat(revoked).isEmpty();

        rbac.set(janeReadsSecretsIn("prod"));
        assertThat(access.recheckKubernetesWatches()).isEqualTo(1);
        assertThat(revoked)
                .containsExactly(
                        "User \"jane\" cannot watch resource \"secrets\" in API group \"\" in the namespace \"shop\"");
        grant.end("forbidden", 0);
        assertThat(access.grants()).isZero();
    }
}

package io.watchfanout.fanout.kube.authz;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.fanout.security.RequestAttributes;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** RBAC decisions as kube-apiserver's RBAC authorizer makes them. */
class RbacTest {
    private static final Rbac.Rule READ_PODS =
            new Rbac.Rule(Set.of("get", "list", "watch"), Set.of(""), Set.of("pods"), Set.of(), Set.of());
    private static final Rbac.Rule ONE_SECRET =
            new Rbac.Rule(Set.of("get"), Set.of(""), Set.of("secrets"), Set.of("db-password"), Set.of());
    private static final Rbac.Rule EVERYTHING =
            new Rbac.Rule(Set.of("*"), Set.of("*"), Set.of("*"), Set.of(), Set.of());
    private static final Rbac.Rule STATUS_ONLY =
            new Rbac.Rule(Set.of("get"), Set.of("apps"), Set.of("*/status"), Set.of(), Set.of());
    private static final Rbac.Rule DISCOVERY =
            new Rbac.Rule(Set.of("get"), Set.of(), Set.of(), Set.of(), Set.of("/api", "/api/*", "/version"));

    private final Rbac rbac = new Rbac(
            Map.of(
                    "view-pods",
                    List.of(READ_PODS),
                    "admin",
                    List.of(EVERYTHING),
                    "discovery",
                    List.of(DISCOVERY),
                    "status-reader",
                    List.of(STATUS_ONLY)),
            Map.of("team-a/secret-reader", List.of(ONE_SECRET)),
            List.of(
                    new Rbac.Binding(
                            "team-a",
                            "jane-pods",
                            "ClusterRole",
                            "view-pods",
                            List.of(new Rbac.Subject("User", "jane", ""))),
                    new Rbac.Binding(
                            "team-a",
                            "jane-secret",
                            "Role",
                            "secret-reader",
                            List.of(new Rbac.Subject("User", "jane", ""))),
                    new Rbac.Binding(
                            "", "ops-admin", "ClusterRole", "admin", List.of(new Rbac.Subject("Group", "ops", ""))),
                    new Rbac.Binding(
                            "",
                            "everyone-discovers",
                            "ClusterRole",
                            "discovery",
                            List.of(new Rbac.Subject("Group", "system:authenticated", ""))),
                    new Rbac.Binding(
                            "team-b",
                            "builder",
                            "ClusterRole",
                            "view-pods",
                            List.of(new Rbac.Subject("ServiceAccount", "builder", ""))),
                    new Rbac.Binding(
                            "",
                            "status",
                            "ClusterRole",
                            "status-reader",
                            List.of(new Rbac.Subject("User", "monitor", "")))));

    @Test
    void aClusterRoleBoundInANamespaceAllowsOnlyThere() {
        assertThat(rbac.allows(resource("jane", "list", "", "pods", "", "team-a", "")))
                .isTrue();
        assertThat(rbac.allows(resource("jane", "watch", "", "pods", "", "team-a", "")))
                .isTrue();
        assertThat(rbac.allows(resource("jane", "list", "", "pods", "", "team-b", "")))
                .isFalse();
        assertThat(rbac.allows(resource("jane", "list", "", "pods", "", "", "")))
                .isFalse();
        assertThat(rbac.allows(resource("jane", "list", "", "pods", "log", "team-a", "")))
                .isFalse();
    }

    @Test
    void resourceNamesAllowOnlyTheNamedObject() {
        assertThat(rbac.allows(resource("jane", "get", "", "secrets", "", "team-a", "db-password")))
                .isTrue();
        assertThat(rbac.allows(resource("jane", "get", "", "secrets", "", "team-a", "other")))
                .isFalse();
        assertThat(rbac.allows(resource("jane", "list", "", "secrets", "", "team-a", "")))
                .isFalse();
    }

    @Test
    void wildcardsGroupsServiceAccountsSubresourcesAndPaths() {
        RequestAttributes opsSecrets = new RequestAttributes(
                "bob", List.of("ops", "system:authenticated"), "watch", "", "secrets", "", "x", "", "", true);
        assertThat(rbac.allows(opsSecrets)).isTrue();
        assertThat(rbac.allows(resource("system:serviceaccount:team-b:builder", "list", "", "pods", "", "team-b", "")))
                .isTrue();
        assertThat(rbac.allows(resource("system:serviceaccount:team-a:builder", "list", "", "pods", "", "team-b", "")))
                .isFalse();
        assertThat(rbac.allows(resource("monitor", "get", "apps", "deployments", "status", "x", "d")))
                .isTrue();
        assertThat(rbac.allows(resource("monitor", "get", "apps", "deployments", "", "x", "d")))
                .isFalse();
        RequestAttributes discovery = new RequestAttributes(
                "eve", List.of("system:authenticated"), "get", "", "", "", "", "", "/api/v1", false);
        assertThat(rbac.allows(discovery)).isTrue();
        assertThat(rbac.allows(new RequestAttributes(
                        "eve", List.of("system:authenticated"), "get", "", "", "", "", "", "/apis", false)))
                .isFalse();
    }

    @Test
    void denialsReadAsKubeApiserversMessages() {
        assertThat(Rbac.denial(resource("jane", "list", "", "secrets", "", "prod", "")))
                .isEqualTo(
                        "User \"jane\" cannot list resource \"secrets\" in API group \"\" in the namespace \"prod\"");
        assertThat(Rbac.denial(resource("jane", "watch", "apps", "deployments", "status", "", "")))
                .isEqualTo(
                        "User \"jane\" cannot watch resource \"deployments/status\" in API group \"apps\" at the cluster scope");
        assertThat(Rbac.denial(new RequestAttributes("eve", List.of(), "get", "", "", "", "", "", "/apis", false)))
                .isEqualTo("User \"eve\" cannot get path \"/apis\"");
    }

    private static RequestAttributes resource(
            String user, String verb, String group, String resource, String sub, String ns, String name) {
        return new RequestAttributes(user, List.of(), verb, group, resource, sub, ns, name, "", true);
    }
}

package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.testkit.Pki;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kube-apiserver's request-header authenticator: who may name users, and how. */
class FrontProxyTest {
    @TempDir
    Path dir;

    @Test
    void onlyAnAllowedCertificateOfTheProxysCaNamesTheUserAndGroups() throws Exception {
        Pki proxyCa = Pki.create(dir.resolve("proxy"), "front-proxy-ca");
        Pki clusterCa = Pki.create(dir.resolve("cluster"), "kubernetes-ca");
        FrontProxy proxy = new FrontProxy(
                proxyCa.caCert(),
                List.of("front-proxy-client"),
                List.of("X-Remote-User", "X-Forwarded-User"),
                List.of("X-Remote-Group"));
        List<X509Certificate> allowed =
                chain(proxyCa.client("proxy", "front-proxy-client").cert());
        Map<String, List<String>> headers = Map.of(
                "X-Remote-User", List.of(""),
                "X-Forwarded-User", List.of("alice"),
                "X-Remote-Group", List.of("viewers", "system:masters"));
        Function<String, List<String>> read = name -> headers.getOrDefault(name, List.of());

        Identity alice = proxy.authenticate(allowed, read);
        assertThat(alice.name()).isEqualTo("alice");
        assertThat(alice.groups()).containsExactlyInAnyOrder("viewers", "system:masters");
        assertThat(alice.method()).isEqualTo(Identity.Method.FRONT_PROXY);

        // Without a username header, or with another CA's certificate, or none: not the proxy's request.
        assertThat(proxy.authenticate(allowed, name -> List.of())).isNull();
        assertThat(proxy.authenticate(chain(clusterCa.client("jane", "jane").cert()), read))
                .isNull();
        assertThat(proxy.authenticate(List.of(), read)).isNull();
        // The proxy's CA, a name not allowed: refused.
        assertThatThrownBy(() -> proxy.authenticate(
                        chain(proxyCa.client("rogue", "rogue").cert()), read))
                .isInstanceOf(AuthenticationException.class)
                .hasMessageContaining("--requestheader-allowed-names");
    }

    private static List<X509Certificate> chain(Path pem) throws Exception {
        try (InputStream in = Files.newInputStream(pem)) {
            return List.of(
                    (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
    }
}

package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ContinueToken.Form;
import io.watchfanout.fanout.read.ReadMode;
import org.junit.jupiter.api.Test;

/** Content negotiation and the revision rules of Kubernetes reads, as kube-apiserver decides them. */
class KubeRequestOptionsTest {
    @Test
    void theFirstServedMediaTypeOfAcceptWins() {
        assertThat(KubeFormat.negotiate(null, true, true)).isEqualTo(KubeFormat.JSON);
        assertThat(KubeFormat.negotiate("*/*", true, true)).isEqualTo(KubeFormat.JSON);
        // client-go's typed clients
        assertThat(KubeFormat.negotiate("application/vnd.kubernetes.protobuf, application/json", true, true))
                .isEqualTo(KubeFormat.PROTOBUF);
        // custom resources have no protobuf form: the next choice
        assertThat(KubeFormat.negotiate("application/vnd.kubernetes.protobuf, application/json", false, true))
                .isEqualTo(KubeFormat.JSON);
        // kubectl get
        assertThat(KubeFormat.negotiate(
                        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
                                + "g=meta.k8s.io,application/json",
                        true,
                        true))
                .isEqualTo(KubeFormat.TABLE);
        assertThat(KubeFormat.negotiate(
                        "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json",
                        true,
                        true))
                .isEqualTo(KubeFormat.JSON);
        assertThat(KubeFormat.negotiate("application/yaml", true, true)).isNull();
        assertThat(KubeFormat.negotiate("application/vnd.kubernetes.protobuf", false, true))
                .isNull();
    }

    @Test
    void resourceVersionLimitAndContinueChooseTheRevision() throws KubeError {
        assertThat(KubeReadOptions.list(null, null, null, null, null).mode()).isEqualTo(ReadMode.MOST_RECENT);
        assertThat(KubeReadOptions.list("0", null, "500", null, null).mode()).isEqualTo(ReadMode.ANY);
        assertThat(KubeReadOptions.list("7", null, null, null, null).mode()).isEqualTo(ReadMode.NOT_OLDER_THAN);
        // the legacy rule: the first page of a paged list at N is exact
        assertThat(KubeReadOptions.list("7", null, "5", null, null).mode()).isEqualTo(ReadMode.EXACT);
        assertThat(KubeReadOptions.list("7", "NotOlderThan", "5", null, null).mode())
                .isEqualTo(ReadMode.NOT_OLDER_THAN);
        assertThat(KubeReadOptions.list("7", "Exact", null, null, null).resourceVersion())
                .isEqualTo(7);
        assertThat(KubeReadOptions.list(null, null, "-3", null, null).limit()).isZero();
        assertThat(KubeReadOptions.list(null, null, "99999999999999", null, null)
                        .limit())
                .isEqualTo(Integer.MAX_VALUE);
        String token = new ContinueToken(9, ByteString.copyFromUtf8("a/p2"), 4).encode(Form.KUBERNETES);
        KubeReadOptions next = KubeReadOptions.list("0", null, "2", token, null);
        assertThat(next.mode()).isEqualTo(ReadMode.CONTINUE);
        assertThat(next.token()).isEqualTo(new ContinueToken(9, ByteString.copyFromUtf8("a/p2"), 4));
        assertThat(ContinueToken.decode(
                                new ContinueToken(ContinueToken.LATEST, ByteString.copyFromUtf8("p"), -1)
                                        .encode(Form.KUBERNETES),
                                Form.KUBERNETES)
                        .revision())
                .isEqualTo(ContinueToken.LATEST);
    }

    @Test
    void refusalsUseKubeApiserversCodesAndWords() {
        assertThatThrownBy(() -> KubeReadOptions.list(null, "Exact", null, null, null))
                .isInstanceOf(KubeError.class)
                .hasMessage("ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
                        + "resourceVersionMatch is forbidden unless resourceVersion is provided")
                .satisfies(e -> assertThat(((KubeError) e).code()).isEqualTo(422));
        assertThatThrownBy(() -> KubeReadOptions.list("0", "Exact", null, null, null))
                .hasMessageContaining("resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
        assertThatThrownBy(() -> KubeReadOptions.list(
                        "5",
                        null,
                        null,
                        new ContinueToken(9, ByteString.copyFromUtf8("x"), -1).encode(Form.KUBERNETES),
                        null))
                .hasMessage("specifying resource version is not allowed when using continue")
                .satisfies(e -> assertThat(((KubeError) e).code()).isEqualTo(400));
        assertThatThrownBy(() -> KubeReadOptions.list("abc", null, null, null, null))
                .hasMessage(
                        "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax")
                .satisfies(e -> assertThat(((KubeError) e).code()).isEqualTo(400));
        assertThatThrownBy(() -> KubeReadOptions.list("-1", null, null, null, null))
                .hasMessage(
                        "resourceVersion: Invalid value: \"-1\": strconv.ParseUint: parsing \"-1\": invalid syntax");
        assertThatThrownBy(() -> KubeReadOptions.list("99999999999999999999", null, null, null, null))
                .hasMessageEndingWith("value out of range");
        assertThatThrownBy(() -> KubeReadOptions.list(null, null, "ten", null, null))
                .hasMessage("strconv.ParseInt: parsing \"ten\": invalid syntax")
                .satisfies(e -> assertThat(((KubeError) e).code()).isEqualTo(400));
        assertThatThrownBy(() -> KubeReadOptions.list(null, null, "", null, null))
                .hasMessage("strconv.ParseInt: parsing \"\": invalid syntax");
        assertThatThrownBy(() -> KubeReadOptions.list(null, null, "1e3", null, null))
                .hasMessage("strconv.ParseInt: parsing \"1e3\": invalid syntax");
        assertThatThrownBy(() -> KubeReadOptions.list(null, null, null, null, "true"))
                .hasMessage("ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
                        + "sendInitialEvents is forbidden for list")
                .satisfies(e -> assertThat(((KubeError) e).code()).isEqualTo(422));
        assertThatThrownBy(() -> KubeReadOptions.list(null, "NotOlderThan", null, null, "false"))
                .hasMessage("ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: "
                        + "resourceVersionMatch is forbidden unless resourceVersion is provided, sendInitialEvents: "
                        + "Forbidden: sendInitialEvents is forbidden for list]");
        assertThatThrownBy(() -> KubeReadOptions.list(null, null, null, "garbage", null))
                .hasMessageStartingWith("continue key is not valid");
        assertThatThrownBy(() -> KubeReadOptions.get("-1")).isInstanceOf(KubeError.class);
    }
}

package io.watchfanout.fanout.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.proto.V1Authorization;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KubeReviewsTest {
    private static final Identity JANE =
            new Identity("jane", Set.of("dev", "system:authenticated"), Identity.Method.TOKEN);

    private static JsonObject answer(String path, String body, KubeReviews.Decider decider) throws KubeError {
        return JsonParser.parseString(new String(
                        KubeReviews.answer(path, JANE, body.getBytes(StandardCharsets.UTF_8), decider),
                        StandardCharsets.UTF_8))
                .getAsJsonObject();
    }

    @Test
    void anAccessReviewAsksTheDeciderWithKubeApiserversAttributesAndEchoesTheSpec() throws Exception {
        List<RequestAttributes> asked = new ArrayList<>();
        JsonObject allowed = answer(
                KubeReviews.ACCESS_REVIEWS,
                "{\"kind\":\"SelfSubjectAccessReview\",\"apiVersion\":\"authorization.k8s.io/v1\",\"spec\":"
                        + "{\"resourceAttributes\":{\"namespace\":\"a\",\"verb\":\"list\",\"group\":\"apps\","
                        + "\"resource\":\"deployments\"}}}",
                r -> {
                    asked.add(r);
                    return null;
                });
        assertThat(allowed.getAsJsonObject("status").get("allowed").getAsBoolean())
                .isTrue();
        assertThat(allowed.getAsJsonObject("status").has("reason")).isFalse();
        assertThat(allowed.getAsJsonObject("spec").toString()).contains("deployments");
        assertThat(asked)
                .containsExactly(new RequestAttributes(
                        "jane", asked.get(0).groups(), "list", "apps", "deployments", "", "a", "", "", true));
        assertThat(asked.get(0).groups()).containsExactlyInAnyOrder("dev", "system:authenticated");

        JsonObject denied = answer(
                KubeReviews.ACCESS_REVIEWS,
                "{\"spec\":{\"nonResourceAttributes\":{\"path\":\"/apis\",\"verb\":\"get\"}}}",
                r -> "no rule allows " + r.path());
        assertThat(denied.getAsJsonObject("status").get("allowed").getAsBoolean())
                .isFalse();
        assertThat(denied.getAsJsonObject("status").get("reason").getAsString()).isEqualTo("no rule allows /apis");
    }

    @Test
    void aWriteIsNeverAllowedAndTheDeciderIsNotAsked() throws Exception {
        JsonObject write = answer(
                KubeReviews.ACCESS_REVIEWS,
                "{\"spec\":{\"resourceAttributes\":{\"verb\":\"create\",\"resource\":\"pods\"}}}",
                r -> {
                    throw new AssertionError("asked");
                });
        assertThat(write.getAsJsonObject("status").get("allowed").getAsBoolean())
                .isFalse();
        assertThat(write.getAsJsonObject("status").get("reason").getAsString())
                .startsWith("this node is a read-only tier");
    }

    @Test
    void aSubjectReviewNamesTheUserAndGroups() throws Exception {
        JsonObject who = answer(KubeReviews.SUBJECT_REVIEWS, "{\"kind\":\"SelfSubjectReview\"}", r -> null);
        JsonObject user = who.getAsJsonObject("status").getAsJsonObject("userInfo");
        assertThat(user.get("username").getAsString()).isEqualTo("jane");
        assertThat(user.get("groups").toString()).contains("dev").contains("system:authenticated");
    }

    @Test
    void badBodiesAreRefusedWithKubeApiserversCodes() {
        assertThatThrownBy(() -> answer(KubeReviews.ACCESS_REVIEWS, "not json{", r -> null))
                .isInstanceOfSatisfying(
                        KubeError.class, e -> assertThat(e.code()).isEqualTo(400));
        assertThatThrownBy(() -> answer(KubeReviews.ACCESS_REVIEWS, "{\"kind\":\"Pod\"}", r -> null))
                .isInstanceOfSatisfying(
                        KubeError.class, e -> assertThat(e.code()).isEqualTo(400));
        assertThatThrownBy(() -> answer(KubeReviews.ACCESS_REVIEWS, "{\"spec\":{}}", r -> null))
                .isInstanceOfSatisfying(
                        KubeError.class, e -> assertThat(e.code()).isEqualTo(422));
        assertThatThrownBy(() -> answer(
                        KubeReviews.ACCESS_REVIEWS,
                        "{\"spec\":{\"resourceAttributes\":{},\"nonResourceAttributes\":{}}}",
                        r -> null))
                .isInstanceOfSatisfying(
                        KubeError.class, e -> assertThat(e.code()).isEqualTo(422));
    }

    @Test
    void anAccessReviewPostedAsProtobufIsReadAsKubectlSendsIt() throws Exception {
        byte[] body = StorageEnvelope.wrap(
                "authorization.k8s.io/v1",
                "SelfSubjectAccessReview",
                V1Authorization.SelfSubjectAccessReview.newBuilder()
                        .setSpec(V1Authorization.SelfSubjectAccessReviewSpec.newBuilder()
                                .setResourceAttributes(V1Authorization.ResourceAttributes.newBuilder()
                                        .setNamespace("a")
                                        .setVerb("watch")
                                        .setResource("secrets")
                                        .setName("db")))
                        .build());
        List<RequestAttributes> asked = new ArrayList<>();
        JsonObject answer = JsonParser.parseString(new String(
                        KubeReviews.answer(KubeReviews.ACCESS_REVIEWS, JANE, body, r -> {
                            asked.add(r);
                            return "no";
                        }),
                        StandardCharsets.UTF_8))
                .getAsJsonObject();
        assertThat(asked)
                .extracting(RequestAttributes::verb, RequestAttributes::resource, RequestAttributes::name)
                .containsExactly(tuple("watch", "secrets", "db"));
        assertThat(answer.get("kind").getAsString()).isEqualTo("SelfSubjectAccessReview");
        assertThat(answer.getAsJsonObject("status").get("allowed").getAsBoolean())
                .isFalse();
    }
}

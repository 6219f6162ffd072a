package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.watchfanout.kube.codec.MessagePlans.ScalarJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The resource {@value MessagePlans#GO_JSON_FIELDS_RESOURCE} says, per protobuf message, which
 * scalar fields Go's encoding/json writes even when zero: value fields without {@code omitempty}
 * and pointers (set when on the wire). It is derived from the Go struct tags of the schema's
 * release; these checks hold it to the schema and to client-java-api's OpenAPI {@code required}
 * lists (the same release), which name the fields without {@code omitempty} that are not
 * {@code +optional}.
 */
class ScalarFieldsTest {
    private static final String MODELS = "io.kubernetes.client.openapi.models.";

    /**
     * Fields marked {@code +required} whose Go json tag still has {@code omitempty}: OpenAPI lists
     * them as required, encoding/json leaves their zero out.
     */
    private static final Set<String> REQUIRED_WITH_OMITEMPTY = Set.of(
            "k8s.io.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec.policyName",
            "k8s.io.api.core.v1.ContainerRestartRule.action",
            "k8s.io.api.core.v1.ContainerRestartRuleOnExitCodes.operator",
            "k8s.io.api.core.v1.ImageVolumeStatus.imageRef",
            "k8s.io.api.core.v1.PodCertificateProjection.keyType",
            "k8s.io.api.core.v1.PodCertificateProjection.signerName",
            "k8s.io.api.networking.v1.ParentReference.name",
            "k8s.io.api.networking.v1.ParentReference.resource");

    @Test
    void everyListedFieldIsAScalarOfTheSchema() {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Map<String, ScalarJson>> message :
                MessagePlans.goJsonFields().entrySet()) {
            Descriptor type = KubeSchema.standard().message(message.getKey()).orElse(null);
            if (type == null) {
                wrong.add(message.getKey() + " (no such message)");
                continue;
            }
            for (String name : message.getValue().keySet()) {
                FieldDescriptor field = type.findFieldByName(name);
                if (field == null || field.isRepeated() || field.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                    wrong.add(message.getKey() + "." + name);
                }
            }
        }
        assertThat(wrong).as("listed fields that are not scalars of the schema").isEmpty();
    }

    @Test
    void everyOpenApiRequiredScalarIsAlwaysWritten() {
        List<String> missing = new ArrayList<>();
        for (Descriptor message : KubeSchema.standard().messages()) {
            Class<?> model = model(message);
            if (model == null) {
                continue;
            }
            Set<String> required = staticSet(model, "openapiRequiredFields");
            for (FieldDescriptor field : message.getFields()) {
                String name = message.getFullName() + "." + field.getName();
                if (required.contains(MessagePlans.jsonName(message, field))
                        && !field.isRepeated()
                        && field.getJavaType() != FieldDescriptor.JavaType.MESSAGE
                        && !MessagePlans.scalarJson(message, field).always()
                        && !REQUIRED_WITH_OMITEMPTY.contains(name)) {
                    missing.add(name);
                }
            }
        }
        assertThat(missing)
                .as("required scalars the resource does not write when empty")
                .isEmpty();
    }

    @Test
    void goFieldsAsEncodingJsonWritesThem() {
        assertThat(json("k8s.io.api.core.v1.ContainerStatus", "imageID")).isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.core.v1.ContainerStatus", "ready")).isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.core.v1.ContainerStatus", "restartCount")).isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.core.v1.ContainerStatus", "containerID")).isEqualTo(ScalarJson.OMITEMPTY);
        assertThat(json("k8s.io.api.core.v1.ContainerStatus", "started")).isEqualTo(ScalarJson.POINTER);
        assertThat(json("k8s.io.api.core.v1.ContainerPort", "containerPort")).isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.core.v1.ServicePort", "port")).isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.core.v1.ServicePort", "nodePort")).isEqualTo(ScalarJson.OMITEMPTY);
        assertThat(json("k8s.io.api.core.v1.GRPCAction", "service")).isEqualTo(ScalarJson.POINTER_ALWAYS);
        // +optional without omitempty: not in OpenAPI's required lists, still written.
        assertThat(json("k8s.io.api.apps.v1.StatefulSetStatus", "availableReplicas"))
                .isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.core.v1.Event", "reportingComponent")).isEqualTo(ScalarJson.ALWAYS);
        assertThat(json("k8s.io.api.apps.v1.DeploymentSpec", "replicas")).isEqualTo(ScalarJson.POINTER);
        assertThat(json("k8s.io.api.apps.v1.DeploymentSpec", "minReadySeconds")).isEqualTo(ScalarJson.OMITEMPTY);
        assertThat(json("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", "generation"))
                .isEqualTo(ScalarJson.OMITEMPTY);
    }

    private static ScalarJson json(String message, String field) {
        Descriptor type = KubeSchema.standard().message(message).orElseThrow();
        return MessagePlans.scalarJson(type, type.findFieldByName(field));
    }

    /**
     * The client-java model of a message: {@code <Group><Version><Name>} where a name is taken by
     * several groups ({@code CoreV1Event}), else {@code <Version><Name>}; only a model that has
     * every JSON name of the message's fields counts, so that a same-named type of another group
     * is never taken.
     */
    private static Class<?> model(Descriptor message) {
        String[] pkg = message.getFile().getPackage().split("\\.");
        String version = capitalize(pkg[pkg.length - 1]);
        String group = capitalize(pkg[pkg.length - 2]);
        for (String name : List.of(group + version + message.getName(), version + message.getName())) {
            Class<?> model;
            try {
                model = Class.forName(MODELS + name);
            } catch (ClassNotFoundException e) {
                continue;
            }
            Set<String> known = staticSet(model, "openapiFields");
            boolean matches = true;
            for (FieldDescriptor field : message.getFields()) {
                matches &=
                        known.contains(MessagePlans.jsonName(message, field)) || MessagePlans.isInline(message, field);
            }
            if (matches) {
                return model;
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static Set<String> staticSet(Class<?> model, String name) {
        try {
            return (Set<String>) model.getField(name).get(null);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(model + " has no " + name, e);
        }
    }

    private static String capitalize(String s) {
        return s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1);
    }
}

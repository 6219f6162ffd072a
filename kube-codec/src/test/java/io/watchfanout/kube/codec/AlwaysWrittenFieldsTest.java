package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The resource {@value MessagePlans#ALWAYS_WRITTEN_RESOURCE} lists, per protobuf message, the
 * scalar fields whose Go field has no {@code omitempty} and no {@code +optional}: kube-apiserver's
 * JSON carries them even when empty ({@code "imageID":""}), and clients check for them
 * (client-java's and the Python client's validation of required fields). It is generated from the
 * OpenAPI {@code required} lists of {@code io.kubernetes:client-java-api} (the same release as the
 * protobuf schema), whose generator derives them from exactly those Go tags; this test fails when
 * the file no longer matches, and {@code -Dkube.alwaysWritten.write=true} rewrites it.
 */
class AlwaysWrittenFieldsTest {
    private static final String MODELS = "io.kubernetes.client.openapi.models.";

    @Test
    void resourceMatchesTheRequiredFieldsOfTheOpenApiModels() throws Exception {
        String generated = generate();
        Path file = Path.of("src/main/resources").resolve(MessagePlans.ALWAYS_WRITTEN_RESOURCE.substring(1));
        if (Boolean.getBoolean("kube.alwaysWritten.write")) {
            Files.writeString(file, generated);
        }
        assertThat(Files.readString(file))
                .as("regenerate with -Dkube.alwaysWritten.write=true")
                .isEqualTo(generated);
    }

    @Test
    void containerStatusImageIdIsAlwaysWrittenAndContainerIdIsNot() {
        Descriptor status = KubeSchema.standard()
                .message("k8s.io.api.core.v1.ContainerStatus")
                .orElseThrow();
        assertThat(MessagePlans.alwaysWritten(status)).contains("imageID", "image", "name", "ready", "restartCount");
        assertThat(MessagePlans.alwaysWritten(status)).doesNotContain("containerID", "started");
    }

    private static String generate() throws IOException {
        List<Descriptor> messages = new ArrayList<>(KubeSchema.standard().messages());
        messages.sort(Comparator.comparing(Descriptor::getFullName));
        StringBuilder out = new StringBuilder()
                .append("# Scalar fields kube-apiserver's JSON always carries, even when empty: Go fields without\n")
                .append("# omitempty and +optional (OpenAPI \"required\"), by protobuf message and proto field name.\n")
                .append("# Generated from io.kubernetes:client-java-api by AlwaysWrittenFieldsTest; do not edit.\n");
        for (Descriptor message : messages) {
            Class<?> model = model(message);
            if (model == null) {
                continue;
            }
            Set<String> required = staticSet(model, "openapiRequiredFields");
            List<String> fields = new ArrayList<>();
            for (FieldDescriptor field : message.getFields()) {
                boolean scalar = !field.isRepeated() && field.getJavaType() != FieldDescriptor.JavaType.MESSAGE;
                if (scalar && required.contains(MessagePlans.jsonName(message, field))) {
                    fields.add(field.getName());
                }
            }
            if (!fields.isEmpty()) {
                out.append(message.getFullName())
                        .append(' ')
                        .append(String.join(" ", fields))
                        .append('\n');
            }
        }
        return out.toString();
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

package io.watchfanout.kube.codec;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How each message of the schema is written as JSON, worked out once per message type: its
 * fields by number with their JSON names (quoted, with the colon), which are embedded Go structs
 * written inline, how each scalar's zero value is written (the resource
 * {@value #GO_JSON_FIELDS_RESOURCE}), and which messages have a JSON form of their own
 * ({@link ProtoJsonWriter.Special}).
 *
 * <p>The generated {@code .proto} files name fields after the Go fields, which mostly equals the
 * JSON name; the exceptions (a leading acronym, apiextensions' {@code $ref} and
 * {@code x-kubernetes-*}, a few admissionregistration fields named after the Go field) and the
 * embedded structs ({@code json:",inline"}) are listed here.
 *
 * <p>Thread-safe: plans are immutable and cached in a concurrent map.
 */
final class MessagePlans {
    private static final String META = "k8s.io.apimachinery.pkg.apis.meta.v1.";
    private static final String APIEXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.";

    private static final Map<String, ProtoJsonWriter.Special> SPECIAL = Map.ofEntries(
            Map.entry(META + "Time", ProtoJsonWriter.Special.TIME),
            Map.entry(META + "MicroTime", ProtoJsonWriter.Special.MICRO_TIME),
            Map.entry(META + "Duration", ProtoJsonWriter.Special.DURATION),
            Map.entry(META + "FieldsV1", ProtoJsonWriter.Special.RAW_JSON),
            Map.entry(META + "Verbs", ProtoJsonWriter.Special.STRING_LIST),
            Map.entry("k8s.io.apimachinery.pkg.runtime.RawExtension", ProtoJsonWriter.Special.RAW_JSON),
            Map.entry("k8s.io.apimachinery.pkg.util.intstr.IntOrString", ProtoJsonWriter.Special.INT_OR_STRING),
            Map.entry("k8s.io.apimachinery.pkg.api.resource.Quantity", ProtoJsonWriter.Special.QUANTITY),
            Map.entry("k8s.io.apimachinery.pkg.api.resource.QuantityValue", ProtoJsonWriter.Special.QUANTITY),
            Map.entry(APIEXTENSIONS + "v1.JSON", ProtoJsonWriter.Special.RAW_JSON),
            Map.entry(APIEXTENSIONS + "v1beta1.JSON", ProtoJsonWriter.Special.RAW_JSON),
            Map.entry(APIEXTENSIONS + "v1.JSONSchemaPropsOrArray", ProtoJsonWriter.Special.SCHEMA_OR_ARRAY),
            Map.entry(APIEXTENSIONS + "v1beta1.JSONSchemaPropsOrArray", ProtoJsonWriter.Special.SCHEMA_OR_ARRAY),
            Map.entry(APIEXTENSIONS + "v1.JSONSchemaPropsOrBool", ProtoJsonWriter.Special.SCHEMA_OR_BOOL),
            Map.entry(APIEXTENSIONS + "v1beta1.JSONSchemaPropsOrBool", ProtoJsonWriter.Special.SCHEMA_OR_BOOL),
            Map.entry(
                    APIEXTENSIONS + "v1.JSONSchemaPropsOrStringArray", ProtoJsonWriter.Special.SCHEMA_OR_STRING_ARRAY),
            Map.entry(
                    APIEXTENSIONS + "v1beta1.JSONSchemaPropsOrStringArray",
                    ProtoJsonWriter.Special.SCHEMA_OR_STRING_ARRAY));

    /**
     * Embedded Go structs ({@code json:",inline"}), whose fields JSON writes in the embedding
     * object: by proto field name, for names that only embeddings use...
     */
    private static final Set<String> INLINE_NAMES = Set.of(
            "localObjectReference", // ConfigMapKeySelector, SecretEnvSource, ConfigMapVolumeSource, ...
            "volumeSource",
            "persistentVolumeSource",
            "ephemeralContainerCommon",
            "ingressRuleValue",
            "ruleWithOperations",
            "deviceConfiguration");

    /** ...and by message full name + "." + field name where the name is also used by plain fields. */
    private static final Set<String> INLINE_FIELDS = Set.of(
            "k8s.io.api.core.v1.Probe.handler",
            "k8s.io.api.admissionregistration.v1.RuleWithOperations.rule",
            "k8s.io.api.admissionregistration.v1beta1.RuleWithOperations.rule");

    /** Where the scalar fields whose zero is not simply left out are listed (see {@link #scalarJson}). */
    static final String GO_JSON_FIELDS_RESOURCE = "/io/watchfanout/kube/codec/go-json-fields.txt";

    private static final Map<String, Map<String, ScalarJson>> GO_JSON_FIELDS = readGoJsonFields();

    private final Map<Descriptor, MessagePlan> plans = new ConcurrentHashMap<>();

    MessagePlan of(Descriptor type) {
        MessagePlan plan = plans.get(type);
        return plan != null ? plan : plans.computeIfAbsent(type, MessagePlans::plan);
    }

    private static MessagePlan plan(Descriptor type) {
        int max = 0;
        for (FieldDescriptor f : type.getFields()) {
            max = Math.max(max, f.getNumber());
        }
        ProtoJsonWriter.FieldPlan[] fields = new ProtoJsonWriter.FieldPlan[max + 1];
        int[] always = new int[type.getFields().size()];
        int n = 0;
        for (FieldDescriptor f : type.getFields()) {
            String name = jsonName(type, f);
            byte[] quoted = ("\"" + name + "\":").getBytes(StandardCharsets.UTF_8);
            ScalarJson json = scalarJson(type, f);
            if (json.always()) {
                always[n++] = f.getNumber();
            }
            fields[f.getNumber()] = new ProtoJsonWriter.FieldPlan(f, quoted, isInline(type, f), json);
        }
        return new MessagePlan(
                fields,
                Arrays.copyOf(always, n),
                SPECIAL.getOrDefault(type.getFullName(), ProtoJsonWriter.Special.NONE),
                type.getFullName().equals(META + "ObjectMeta"));
    }

    /** Whether {@code field} is an embedded Go struct, whose fields JSON writes in {@code type}'s object. */
    static boolean isInline(Descriptor type, FieldDescriptor field) {
        return field.getJavaType() == FieldDescriptor.JavaType.MESSAGE
                && !field.isRepeated()
                && (INLINE_NAMES.contains(field.getName())
                        || INLINE_FIELDS.contains(type.getFullName() + "." + field.getName()));
    }

    /**
     * How kube-apiserver's encoding/json writes the scalar {@code field} of {@code type}, from its
     * Go field's type and json tag ({@value #GO_JSON_FIELDS_RESOURCE}); a repeated or message
     * field, or a scalar the resource does not list, is {@link ScalarJson#OMITEMPTY}.
     */
    static ScalarJson scalarJson(Descriptor type, FieldDescriptor field) {
        if (field.isRepeated() || field.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
            return ScalarJson.OMITEMPTY;
        }
        return GO_JSON_FIELDS
                .getOrDefault(type.getFullName(), Map.of())
                .getOrDefault(field.getName(), ScalarJson.OMITEMPTY);
    }

    /** The listed fields by message full name and proto field name (for checks of the resource). */
    static Map<String, Map<String, ScalarJson>> goJsonFields() {
        return GO_JSON_FIELDS;
    }

    private static Map<String, Map<String, ScalarJson>> readGoJsonFields() {
        Map<String, Map<String, ScalarJson>> byMessage = new HashMap<>();
        try (InputStream in = MessagePlans.class.getResourceAsStream(GO_JSON_FIELDS_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + GO_JSON_FIELDS_RESOURCE);
            }
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] words = line.trim().split(" ");
                Map<String, ScalarJson> fields = new HashMap<>();
                for (int i = 1; i < words.length; i++) {
                    String word = words[i];
                    if (word.startsWith("*") && word.endsWith(",omitempty")) {
                        fields.put(word.substring(1, word.length() - ",omitempty".length()), ScalarJson.POINTER);
                    } else if (word.startsWith("*")) {
                        fields.put(word.substring(1), ScalarJson.POINTER_ALWAYS);
                    } else {
                        fields.put(word, ScalarJson.ALWAYS);
                    }
                }
                byMessage.put(words[0], Map.copyOf(fields));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Map.copyOf(byMessage);
    }

    /**
     * How Go's encoding/json writes a scalar field, which decides what its zero value on the wire
     * means (Go's protobuf marshals a value field whatever its value, a pointer only when set).
     */
    enum ScalarJson {
        /** A value field with {@code omitempty}: its zero is left out. */
        OMITEMPTY(false, false),
        /** A value field without {@code omitempty}: always written, its zero when the bytes lack it. */
        ALWAYS(true, false),
        /** A pointer with {@code omitempty}: written when set (on the wire), its zero included. */
        POINTER(false, true),
        /** A pointer without {@code omitempty}: written when set, {@code null} when not. */
        POINTER_ALWAYS(true, true);

        private final boolean always;
        private final boolean pointer;

        ScalarJson(boolean always, boolean pointer) {
            this.always = always;
            this.pointer = pointer;
        }

        /** Whether JSON carries the field even when the bytes lack it. */
        boolean always() {
            return always;
        }

        /** Whether the Go field is a pointer: on the wire means set, so written even when zero. */
        boolean pointer() {
            return pointer;
        }

        /** Whether a zero value on the wire is written. */
        boolean writesZero() {
            return always || pointer;
        }
    }

    /**
     * Fields whose proto name is the Go field's name, not its json tag's (an admissionregistration
     * {@code protobuf:"...,name=Webhooks"} beside {@code json:"webhooks"}), by message full name +
     * "." + proto name.
     */
    private static final Map<String, String> RENAMED = Map.of(
            "k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration.Webhooks", "webhooks",
            "k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration.Webhooks", "webhooks",
            "k8s.io.api.admissionregistration.v1.Validation.Expression", "expression",
            "k8s.io.api.admissionregistration.v1.Variable.Expression", "expression",
            "k8s.io.api.admissionregistration.v1.Variable.Name", "name");

    /** The JSON name of a field: the Go field's json tag, which the proto name follows but for a few. */
    static String jsonName(Descriptor type, FieldDescriptor field) {
        String name = field.getName();
        String renamed = RENAMED.get(type.getFullName() + "." + name);
        if (renamed != null) {
            return renamed;
        }
        if (type.getName().equals("JSONSchemaProps")) {
            if (name.equals("ref")) {
                return "$ref";
            }
            if (name.equals("schema")) {
                return "$schema";
            }
            if (name.startsWith("xKubernetes")) {
                StringBuilder dashed = new StringBuilder("x");
                for (char c : name.substring(1).toCharArray()) {
                    if (Character.isUpperCase(c)) {
                        dashed.append('-').append(Character.toLowerCase(c));
                    } else {
                        dashed.append(c);
                    }
                }
                return dashed.toString();
            }
        }
        if (name.length() > 1 && Character.isLowerCase(name.charAt(0)) && Character.isUpperCase(name.charAt(1))) {
            // A Go field with a leading acronym (APIGroup, UID): proto "aPIGroup", JSON "apiGroup".
            int upper = 1;
            while (upper < name.length() && Character.isUpperCase(name.charAt(upper))) {
                upper++;
            }
            int lowerTo = upper < name.length() ? upper - 1 : upper;
            return name.substring(0, lowerTo).toLowerCase(Locale.ROOT) + name.substring(lowerTo);
        }
        return name;
    }

    /** How one message type is written. */
    record MessagePlan(
            ProtoJsonWriter.FieldPlan[] fields, int[] always, ProtoJsonWriter.Special special, boolean isObjectMeta) {
        ProtoJsonWriter.FieldPlan field(int number) {
            return number < fields.length ? fields[number] : null;
        }
    }
}

package io.watchfanout.kube.codec;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.watchfanout.common.JsonBuffer;
import java.math.BigDecimal;
import java.util.Arrays;

/**
 * Writes a Kubernetes object stored as protobuf as the JSON kube-apiserver would send for it,
 * straight from the stored bytes: no message objects, no {@code JsonFormat}, one pass over the
 * fields, the {@code resourceVersion} written from the key's revision (kube-apiserver does not
 * store it).
 *
 * <p>The JSON forms follow the Go types' marshalling (k8s.io/apimachinery): {@code metav1.Time}
 * as RFC 3339 in seconds ({@code null} when zero), {@code MicroTime} with six fraction digits,
 * {@code Duration} as a Go duration string, {@code IntOrString} as a bare number or string,
 * {@code Quantity} as its string, {@code RawExtension}, {@code FieldsV1} and apiextensions'
 * {@code JSON} inline, {@code bytes} as base64, maps as objects, embedded structs inline, int64 as
 * numbers. Scalars follow their Go field ({@link MessagePlans#scalarJson}): one without
 * {@code omitempty} is always written, as encoding/json writes it ({@code "imageID":""},
 * {@code "restartCount":0}, also when the bytes lack it); a pointer on the wire is set, so it is
 * written even when zero ({@code "replicas":0}); the zero of any other scalar ({@code ""},
 * {@code 0}, {@code false}, empty bytes) is left out as {@code omitempty} leaves it out, although
 * Go's protobuf marshals it ({@code "generation":0}). Messages present on the wire are written
 * ({@code "status":{}}), as encoding/json writes a struct whatever its tag.
 *
 * <p>Fields the schema does not know (a cluster newer than the schema) are counted and skipped:
 * the caller announces them to JSON clients, while protobuf clients get the stored bytes.
 *
 * <p>Thread-safe: the plans are immutable once made and shared; each call writes only into the
 * caller's buffer.
 */
public final class ProtoJsonWriter {
    private static final int OBJECT_META_FIELD = 1;
    private static final int RESOURCE_VERSION_FIELD = 6;

    private final MessagePlans plans;

    private ProtoJsonWriter(MessagePlans plans) {
        this.plans = plans;
    }

    /** A writer over the plans of {@code schema}'s messages, made as they are first needed. */
    public static ProtoJsonWriter create() {
        return new ProtoJsonWriter(new MessagePlans());
    }

    /**
     * Appends the object {@code buf[off, off + len)} (the typed message of a stored envelope, see
     * {@link StoredObject}) as one JSON object.
     *
     * @param type the object's message ({@link KubeSchema#type})
     * @param apiVersion written as {@code apiVersion} first, with {@code kind}, unless {@code null}
     *     (items of a typed list carry neither)
     * @param resourceVersion written as {@code metadata.resourceVersion}; below 1, the stored
     *     value (normally empty) is kept
     * @return the number of fields the schema did not know, 0 when the JSON holds everything
     * @throws UndecodableObjectException if the bytes are not a valid message of {@code type}
     */
    public int writeObject(
            JsonBuffer out,
            Descriptor type,
            String apiVersion,
            String kind,
            byte[] buf,
            int off,
            int len,
            long resourceVersion)
            throws UndecodableObjectException {
        Pass pass = PASSES.get();
        if (pass.inUse) {
            pass = new Pass(); // a nested call on this thread: its own
        }
        pass.inUse = true;
        pass.unknown = 0;
        try {
            out.raw('{');
            boolean first = true;
            if (apiVersion != null) {
                out.ascii("\"kind\":").string(kind).ascii(",\"apiVersion\":").string(apiVersion);
                first = false;
            }
            fields(out, plans.of(type), new ProtoReader(buf, off, off + len), first, resourceVersion, pass, 0);
            out.raw('}');
        } catch (ProtoReader.MalformedException e) {
            throw new UndecodableObjectException("not a valid " + type.getName() + " message: " + e.getMessage());
        } finally {
            pass.inUse = false;
        }
        return pass.unknown;
    }

    /**
     * The state of one {@link #writeObject} call: the unknown fields seen, and one reusable field
     * index per depth of the walk, so that an object of a hundred messages allocates a handful.
     * Each thread keeps one ({@link #PASSES}), so that a list of thousands of objects reuses it.
     */
    private static final ThreadLocal<Pass> PASSES = ThreadLocal.withInitial(Pass::new);

    private static final class Pass {
        int unknown;
        boolean inUse;
        /**
         * The reader of the nested message being entered: every use reads it whole into a
         * {@link FieldRuns} at once, before the next message is entered, so one serves the walk.
         */
        final ProtoReader reader = new ProtoReader(new byte[0], 0, 0);

        private FieldRuns[] byDepth = new FieldRuns[16];

        FieldRuns read(int depth, ProtoReader in) throws ProtoReader.MalformedException {
            if (depth >= byDepth.length) {
                byDepth = Arrays.copyOf(byDepth, depth * 2);
            }
            FieldRuns runs = byDepth[depth];
            if (runs == null) {
                runs = byDepth[depth] = FieldRuns.empty();
            }
            return runs.reread(in);
        }
    }

    /**
     * Writes the fields of one message (without braces). Returns whether nothing was written, so
     * that an inlined message continues its parent's comma state.
     */
    private boolean fields(
            JsonBuffer out,
            MessagePlans.MessagePlan plan,
            ProtoReader in,
            boolean first,
            long resourceVersion,
            Pass pass,
            int depth)
            throws ProtoReader.MalformedException {
        FieldRuns runs = pass.read(depth, in);
        int alwaysSeen = 0;
        for (int r = 0; r < runs.size(); r++) {
            int number = runs.number(r);
            FieldPlan field = plan.field(number);
            if (field == null) {
                pass.unknown++;
                continue;
            }
            if (resourceVersion > 0 && plan.isObjectMeta() && number == RESOURCE_VERSION_FIELD) {
                continue;
            }
            long metaVersion =
                    resourceVersion > 0 && !plan.isObjectMeta() && number == OBJECT_META_FIELD ? resourceVersion : 0;
            int from = runs.start(r);
            int to = runs.end(r);
            if (field.inline()) {
                ProtoReader value = runs.valueReader(in.buffer(), to - 1, pass.reader);
                first = fields(out, plans.of(field.descriptor().getMessageType()), value, first, 0, pass, depth + 1);
                continue;
            }
            if (field.json().always()) {
                alwaysSeen++;
            } else if (!field.json().writesZero()
                    && !field.descriptor().isRepeated()
                    && runs.isZero(to - 1, field.descriptor())) {
                continue; // omitempty: Go marshals the zero to protobuf, its JSON leaves it out
            }
            if (!first) {
                out.raw(',');
            }
            first = false;
            out.bytes(field.name(), 0, field.name().length);
            if (field.descriptor().isMapField()) {
                map(out, field, runs, in.buffer(), from, to, pass, depth + 1);
            } else if (field.descriptor().isRepeated()) {
                out.raw('[');
                boolean firstItem = true;
                for (int i = from; i < to; i++) {
                    if (runs.isPacked(i, field.descriptor())) {
                        ProtoReader packed = runs.valueReader(in.buffer(), i);
                        while (packed.hasMore()) {
                            firstItem = comma(out, firstItem);
                            packedScalar(out, field.descriptor(), packed);
                        }
                    } else {
                        firstItem = comma(out, firstItem);
                        value(out, field.descriptor(), runs, in.buffer(), i, 0, pass, depth + 1);
                    }
                }
                out.raw(']');
            } else {
                value(out, field.descriptor(), runs, in.buffer(), to - 1, metaVersion, pass, depth + 1);
            }
        }
        if (alwaysSeen < plan.always().length) {
            // A field Go always marshals but these bytes lack (not written by Go's marshaller):
            // its zero value, as kube-apiserver would decode and write it.
            for (int number : plan.always()) {
                if (runs.last(number) < 0) {
                    first = comma(out, first);
                    FieldPlan field = plan.field(number);
                    out.bytes(field.name(), 0, field.name().length);
                    if (field.json().pointer()) {
                        out.ascii("null");
                    } else {
                        zero(out, field.descriptor());
                    }
                }
            }
        }
        if (resourceVersion > 0 && plan.isObjectMeta()) {
            if (!first) {
                out.raw(',');
            }
            first = false;
            out.ascii("\"resourceVersion\":\"").number(resourceVersion).raw('"');
        }
        return first;
    }

    private static boolean comma(JsonBuffer out, boolean first) {
        if (!first) {
            out.raw(',');
        }
        return false;
    }

    private void map(
            JsonBuffer out, FieldPlan field, FieldRuns runs, byte[] buf, int from, int to, Pass pass, int depth)
            throws ProtoReader.MalformedException {
        Descriptor entry = field.descriptor().getMessageType();
        FieldDescriptor keyField = entry.findFieldByNumber(1);
        FieldDescriptor valueField = entry.findFieldByNumber(2);
        out.raw('{');
        for (int i = from; i < to; i++) {
            if (i > from) {
                out.raw(',');
            }
            FieldRuns kv = pass.read(depth, runs.valueReader(buf, i, pass.reader));
            int keyIndex = kv.last(1);
            int valueIndex = kv.last(2);
            if (keyIndex < 0) {
                out.ascii("\"\"");
            } else if (keyField.getType() == FieldDescriptor.Type.STRING) {
                out.utf8String(buf, kv.valueOffset(keyIndex), kv.length(keyIndex));
            } else {
                out.raw('"');
                scalar(out, keyField, kv, buf, keyIndex);
                out.raw('"');
            }
            out.raw(':');
            if (valueIndex < 0) {
                zero(out, valueField);
            } else {
                value(out, valueField, kv, buf, valueIndex, 0, pass, depth + 1);
            }
        }
        out.raw('}');
    }

    private static void zero(JsonBuffer out, FieldDescriptor field) {
        switch (field.getJavaType()) {
            case STRING, BYTE_STRING -> out.ascii("\"\"");
            case BOOLEAN -> out.ascii("false");
            case MESSAGE -> out.ascii("{}");
            default -> out.raw('0');
        }
    }

    private void value(
            JsonBuffer out,
            FieldDescriptor field,
            FieldRuns runs,
            byte[] buf,
            int i,
            long metaVersion,
            Pass pass,
            int depth)
            throws ProtoReader.MalformedException {
        if (field.getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
            scalar(out, field, runs, buf, i);
            return;
        }
        ProtoReader value = runs.valueReader(buf, i, pass.reader);
        MessagePlans.MessagePlan plan = plans.of(field.getMessageType());
        switch (plan.special()) {
            case NONE -> {
                out.raw('{');
                fields(out, plan, value, true, metaVersion, pass, depth);
                out.raw('}');
            }
            case TIME, MICRO_TIME -> time(out, pass.read(depth, value), plan.special() == Special.MICRO_TIME);
            case DURATION -> {
                FieldRuns d = pass.read(depth, value);
                int at = d.last(1);
                out.raw('"').ascii(GoDuration.format(at < 0 ? 0 : d.varint(at))).raw('"');
            }
            case INT_OR_STRING -> {
                FieldRuns v = pass.read(depth, value);
                int type = v.last(1);
                if (type >= 0 && v.varint(type) == 1) {
                    int s = v.last(3);
                    if (s < 0) {
                        out.ascii("\"\"");
                    } else {
                        out.utf8String(buf, v.valueOffset(s), v.length(s));
                    }
                } else {
                    int n = v.last(2);
                    out.number(n < 0 ? 0 : (int) v.varint(n));
                }
            }
            case QUANTITY -> {
                FieldRuns q = pass.read(depth, value);
                int s = q.last(1);
                if (s < 0) {
                    out.ascii("\"0\"");
                } else {
                    out.utf8String(buf, q.valueOffset(s), q.length(s));
                }
            }
            case RAW_JSON -> {
                FieldRuns raw = pass.read(depth, value);
                int s = raw.last(1);
                if (s < 0 || !looksLikeJson(buf, raw.valueOffset(s), raw.length(s))) {
                    out.ascii("null");
                } else {
                    out.bytes(buf, raw.valueOffset(s), raw.length(s));
                }
            }
            case STRING_LIST -> {
                FieldRuns items = pass.read(depth, value);
                out.raw('[');
                boolean firstItem = true;
                for (int k = 0; k < items.size(); k++) {
                    if (items.number(k) == 1) {
                        for (int j = items.start(k); j < items.end(k); j++) {
                            firstItem = comma(out, firstItem);
                            out.utf8String(buf, items.valueOffset(j), items.length(j));
                        }
                    }
                }
                out.raw(']');
            }
            case SCHEMA_OR_ARRAY, SCHEMA_OR_STRING_ARRAY -> {
                FieldRuns v = pass.read(depth, value);
                int schema = v.last(1);
                FieldPlan alternative = plan.field(2);
                if (v.last(2) >= 0 || schema < 0) {
                    // JSONSchemaPropsOrArray {schema, JSONSchemas}, ...OrStringArray {schema, property}
                    out.raw('[');
                    boolean firstItem = true;
                    for (int k = 0; k < v.size(); k++) {
                        if (v.number(k) == 2) {
                            for (int j = v.start(k); j < v.end(k); j++) {
                                firstItem = comma(out, firstItem);
                                value(out, alternative.descriptor(), v, buf, j, 0, pass, depth + 1);
                            }
                        }
                    }
                    out.raw(']');
                } else {
                    value(out, plan.field(1).descriptor(), v, buf, schema, 0, pass, depth + 1);
                }
            }
            case SCHEMA_OR_BOOL -> {
                // JSONSchemaPropsOrBool {allows 1, schema 2}: a schema wins, else the boolean.
                FieldRuns v = pass.read(depth, value);
                int schema = v.last(2);
                if (schema >= 0) {
                    value(out, plan.field(2).descriptor(), v, buf, schema, 0, pass, depth + 1);
                } else {
                    int allows = v.last(1);
                    out.ascii(allows >= 0 && v.varint(allows) != 0 ? "true" : "false");
                }
            }
        }
    }

    private static void time(JsonBuffer out, FieldRuns t, boolean micro) throws ProtoReader.MalformedException {
        if (t.size() == 0) {
            out.ascii("null");
            return;
        }
        int s = t.last(1);
        int n = t.last(2);
        Rfc3339.write(out, s < 0 ? 0 : t.varint(s), n < 0 ? 0 : (int) t.varint(n), micro);
    }

    private static void scalar(JsonBuffer out, FieldDescriptor field, FieldRuns runs, byte[] buf, int i)
            throws ProtoReader.MalformedException {
        switch (field.getType()) {
            case STRING -> out.utf8String(buf, runs.valueOffset(i), runs.length(i));
            case BYTES -> out.base64(buf, runs.valueOffset(i), runs.length(i));
            case BOOL -> out.ascii(runs.varint(i) != 0 ? "true" : "false");
            case INT32, ENUM -> out.number((int) runs.varint(i));
            case UINT32 -> out.number(runs.varint(i) & 0xffffffffL);
            case SINT32, SINT64 -> {
                long v = runs.varint(i);
                out.number((v >>> 1) ^ -(v & 1));
            }
            case FIXED32, SFIXED32 ->
                out.number(
                        field.getType() == FieldDescriptor.Type.FIXED32
                                ? runs.varint(i) & 0xffffffffL
                                : (int) runs.varint(i));
            case FLOAT -> number(out, Float.intBitsToFloat((int) runs.varint(i)));
            case DOUBLE -> number(out, Double.longBitsToDouble(runs.varint(i)));
            default -> out.number(runs.varint(i)); // INT64, UINT64, FIXED64, SFIXED64
        }
    }

    private static void packedScalar(JsonBuffer out, FieldDescriptor field, ProtoReader in)
            throws ProtoReader.MalformedException {
        switch (field.getType()) {
            case FIXED32, SFIXED32, FLOAT -> {
                int bits = in.readFixed32();
                if (field.getType() == FieldDescriptor.Type.FLOAT) {
                    number(out, Float.intBitsToFloat(bits));
                } else {
                    out.number(field.getType() == FieldDescriptor.Type.FIXED32 ? bits & 0xffffffffL : bits);
                }
            }
            case FIXED64, SFIXED64, DOUBLE -> {
                long bits = in.readFixed64();
                if (field.getType() == FieldDescriptor.Type.DOUBLE) {
                    number(out, Double.longBitsToDouble(bits));
                } else {
                    out.number(bits);
                }
            }
            case BOOL -> out.ascii(in.readVarint() != 0 ? "true" : "false");
            case INT32, ENUM -> out.number((int) in.readVarint());
            case SINT32, SINT64 -> {
                long v = in.readVarint();
                out.number((v >>> 1) ^ -(v & 1));
            }
            default -> out.number(in.readVarint());
        }
    }

    /** A float64 as Go's encoding/json writes it: integral values without a fraction, no exponent in [1e-6, 1e21). */
    private static void number(JsonBuffer out, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            out.ascii("null");
        } else if (v == Math.rint(v) && Math.abs(v) < 1e18) {
            out.number((long) v);
        } else if (Math.abs(v) >= 1e-6 && Math.abs(v) < 1e21) {
            out.ascii(new BigDecimal(Double.toString(v)).toPlainString());
        } else {
            out.ascii(Double.toString(v).replace("E", "e"));
        }
    }

    private static boolean looksLikeJson(byte[] buf, int off, int len) {
        for (int i = off; i < off + len; i++) {
            byte b = buf[i];
            if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
                return b == '{'
                        || b == '['
                        || b == '"'
                        || b == 't'
                        || b == 'f'
                        || b == 'n'
                        || b == '-'
                        || (b >= '0' && b <= '9');
            }
        }
        return false;
    }

    /** Messages whose JSON form is not an object of their fields. */
    enum Special {
        NONE,
        TIME,
        MICRO_TIME,
        DURATION,
        INT_OR_STRING,
        QUANTITY,
        RAW_JSON,
        STRING_LIST,
        SCHEMA_OR_ARRAY,
        SCHEMA_OR_BOOL,
        SCHEMA_OR_STRING_ARRAY
    }

    /**
     * How one field is written: its quoted JSON name with the colon, whether it is an embedded
     * struct, and how a scalar's zero value is written (its Go field's type and tag).
     */
    record FieldPlan(FieldDescriptor descriptor, byte[] name, boolean inline, MessagePlans.ScalarJson json) {}
}

package io.watchfanout.kube.codec;

import com.google.protobuf.Descriptors.FieldDescriptor;
import java.util.Arrays;

/**
 * The fields of one protobuf message as read from its bytes, grouped into runs of one field
 * number in ascending order, each entry keeping its value (a varint or fixed value) or where its
 * bytes lie: what a JSON writer needs to write a repeated field as one array even when the wire
 * interleaves it (protobuf allows any order; Go's marshaller writes tag order).
 *
 * <p>Not thread-safe: made and read by one call; {@link #reread} reuses an instance (and its
 * arrays) for the next message at the same depth of a walk.
 */
final class FieldRuns {
    private int[] numbers;
    private int[] wireTypes;
    private long[] values;
    private int count;
    private int[] runStarts;
    private int runs;

    private FieldRuns(int capacity) {
        numbers = new int[capacity];
        wireTypes = new int[capacity];
        values = new long[capacity];
    }

    /** Reads every field of the message {@code in} holds, to its end. */
    static FieldRuns read(ProtoReader in) throws ProtoReader.MalformedException {
        return new FieldRuns(8).reread(in);
    }

    /** An empty instance to {@link #reread} into. */
    static FieldRuns empty() {
        return new FieldRuns(8);
    }

    /** Forgets the previous message and reads the fields of {@code in}, reusing this instance's arrays. */
    FieldRuns reread(ProtoReader in) throws ProtoReader.MalformedException {
        FieldRuns f = this;
        f.count = 0;
        f.runs = 0;
        boolean sorted = true;
        while (in.hasMore()) {
            int tag = in.readTag();
            int wireType = tag & 7;
            long value;
            switch (wireType) {
                case ProtoReader.VARINT -> value = in.readVarint();
                case ProtoReader.FIXED64 -> value = in.readFixed64();
                case ProtoReader.FIXED32 -> value = in.readFixed32() & 0xffffffffL;
                case ProtoReader.LENGTH_DELIMITED -> {
                    int length = in.readLength();
                    value = (long) in.position() << 32 | length;
                    in.skipBytes(length);
                }
                default -> {
                    // Groups are not in Kubernetes' schema: skipped as fields the node does not know.
                    in.skip(tag);
                    value = 0;
                }
            }
            if (f.count > 0 && (tag >>> 3) < f.numbers[f.count - 1]) {
                sorted = false;
            }
            f.add(tag >>> 3, wireType, value);
        }
        if (!sorted) {
            f.sort();
        }
        f.group();
        return f;
    }

    private void add(int number, int wireType, long value) {
        if (count == numbers.length) {
            numbers = Arrays.copyOf(numbers, count * 2);
            wireTypes = Arrays.copyOf(wireTypes, count * 2);
            values = Arrays.copyOf(values, count * 2);
        }
        numbers[count] = number;
        wireTypes[count] = wireType;
        values[count] = value;
        count++;
    }

    private void sort() {
        // Stable insertion sort: the order of one repeated field's elements is their meaning.
        for (int i = 1; i < count; i++) {
            int n = numbers[i];
            int w = wireTypes[i];
            long v = values[i];
            int j = i - 1;
            while (j >= 0 && numbers[j] > n) {
                numbers[j + 1] = numbers[j];
                wireTypes[j + 1] = wireTypes[j];
                values[j + 1] = values[j];
                j--;
            }
            numbers[j + 1] = n;
            wireTypes[j + 1] = w;
            values[j + 1] = v;
        }
    }

    private void group() {
        if (runStarts == null || runStarts.length < count + 1) {
            runStarts = new int[Math.max(count + 1, 8)];
        }
        for (int i = 0; i < count; i++) {
            if (i == 0 || numbers[i] != numbers[i - 1]) {
                runStarts[runs++] = i;
            }
        }
        runStarts[runs] = count;
    }

    /** Number of distinct field numbers. */
    int size() {
        return runs;
    }

    int number(int run) {
        return numbers[runStarts[run]];
    }

    /** First entry of a run. */
    int start(int run) {
        return runStarts[run];
    }

    /** One past the last entry of a run. */
    int end(int run) {
        return runStarts[run + 1];
    }

    /** The last entry of field {@code number} (the one protobuf's merge keeps), or -1. */
    int last(int number) {
        for (int i = count - 1; i >= 0; i--) {
            if (numbers[i] == number) {
                return i;
            }
        }
        return -1;
    }

    /** A varint or fixed entry's value (fixed32 zero-extended). */
    long varint(int entry) throws ProtoReader.MalformedException {
        if (wireTypes[entry] == ProtoReader.LENGTH_DELIMITED) {
            throw new ProtoReader.MalformedException(
                    "field " + numbers[entry] + " is length-delimited, a number was expected");
        }
        return values[entry];
    }

    /** Where a length-delimited entry's bytes start. */
    int valueOffset(int entry) throws ProtoReader.MalformedException {
        requireLengthDelimited(entry);
        return (int) (values[entry] >>> 32);
    }

    /** A length-delimited entry's length in bytes. */
    int length(int entry) throws ProtoReader.MalformedException {
        requireLengthDelimited(entry);
        return (int) values[entry];
    }

    ProtoReader valueReader(byte[] buf, int entry) throws ProtoReader.MalformedException {
        int off = valueOffset(entry);
        return new ProtoReader(buf, off, off + length(entry));
    }

    /** As {@link #valueReader(byte[], int)}, pointing {@code reuse} at the value instead of a new reader. */
    ProtoReader valueReader(byte[] buf, int entry, ProtoReader reuse) throws ProtoReader.MalformedException {
        int off = valueOffset(entry);
        return reuse.reset(buf, off, off + length(entry));
    }

    /**
     * Whether an entry of the scalar {@code field} holds Go's zero value, the one {@code omitempty}
     * leaves out: an empty string or bytes, 0, {@code false}, 0.0 or -0.0. A message is never zero
     * here, nor an entry whose wire type does not fit its field.
     */
    boolean isZero(int entry, FieldDescriptor field) {
        int wireType = wireTypes[entry];
        long value = values[entry];
        return switch (field.getJavaType()) {
            case MESSAGE -> false;
            case STRING, BYTE_STRING -> wireType == ProtoReader.LENGTH_DELIMITED && (int) value == 0;
            case FLOAT -> wireType == ProtoReader.FIXED32 && Float.intBitsToFloat((int) value) == 0;
            case DOUBLE -> wireType == ProtoReader.FIXED64 && Double.longBitsToDouble(value) == 0;
            default -> wireType != ProtoReader.LENGTH_DELIMITED && value == 0;
        };
    }

    /** True for a packed run of scalars: a length-delimited entry of a numeric or boolean field. */
    boolean isPacked(int entry, FieldDescriptor field) {
        if (wireTypes[entry] != ProtoReader.LENGTH_DELIMITED) {
            return false;
        }
        return switch (field.getJavaType()) {
            case STRING, BYTE_STRING, MESSAGE -> false;
            default -> true;
        };
    }

    private void requireLengthDelimited(int entry) throws ProtoReader.MalformedException {
        if (wireTypes[entry] != ProtoReader.LENGTH_DELIMITED) {
            throw new ProtoReader.MalformedException("field " + numbers[entry] + " is not length-delimited");
        }
    }
}

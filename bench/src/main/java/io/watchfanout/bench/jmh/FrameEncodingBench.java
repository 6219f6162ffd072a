package io.watchfanout.bench.jmh;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.bench.BenchEvents;
import io.watchfanout.bench.NanosPerOperation;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ProtoJson;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The cost of one event's watch frame, per encoding: the node's hand-written canonical JSON
 * ({@link ProtoJson}) against protobuf's {@code JsonFormat} printer (same bytes, the library way)
 * and protobuf's delimited encoding; plus the node's whole per-event encode
 * ({@link FrameEncoder#encode}: mapping to {@code WatchEvent}, encoding, copy into a read-only
 * direct buffer), which is what encode-once does once per event and encoding.
 *
 * <p>Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is bytes allocated per frame.
 */
public class FrameEncodingBench extends NanosPerOperation {
    /** Bytes of the value (the previous value is the same size). */
    @Param({"1024"})
    public int valueBytes;

    private Event event;
    private WatchEvent watchEvent;
    private FrameEncoder encoder;
    private JsonFormat.Printer printer;

    @Setup
    public void setup() {
        KeyValue prev = BenchEvents.kv(
                BenchEvents.key("/registry/pods/default/web-7f9c-00042"), BenchEvents.value(valueBytes, 1), 99);
        KeyValue kv = BenchEvents.kv(prev.getKey(), BenchEvents.value(valueBytes, 2), 100);
        event = BenchEvents.put(kv, prev, 100);
        watchEvent = WatchEventEncodings.toWatchEvent(event, 100);
        encoder = new FrameEncoder();
        printer = JsonFormat.printer().omittingInsignificantWhitespace();
    }

    /** The node's JSON line of a prepared {@code WatchEvent} (bytes only). */
    @Benchmark
    public byte[] jsonProtoJson() {
        return ProtoJson.toJsonLine(watchEvent);
    }

    /** The same JSON by protobuf's {@code JsonFormat} printer, to UTF-8 bytes. */
    @Benchmark
    public byte[] jsonJsonFormat() throws InvalidProtocolBufferException {
        return (printer.print(watchEvent) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** Protobuf's delimited encoding (varint length, then the message) into an exact-size array. */
    @Benchmark
    public byte[] protobufDelimited() throws IOException {
        int size = watchEvent.getSerializedSize();
        byte[] out = new byte[CodedOutputStream.computeUInt32SizeNoTag(size) + size];
        CodedOutputStream cos = CodedOutputStream.newInstance(out);
        cos.writeUInt32NoTag(size);
        watchEvent.writeTo(cos);
        return out;
    }

    /** The node's whole JSON frame of an event: mapping, encoding, read-only direct buffer. */
    @Benchmark
    public ByteBuffer nodeFrameJson() {
        return encoder.event(new CachedEvent(event, 0), WatchEventEncodings.JSON, FrameKind.EVENT);
    }

    /** The node's whole protobuf frame of an event. */
    @Benchmark
    public ByteBuffer nodeFrameProtobuf() {
        return encoder.event(new CachedEvent(event, 0), WatchEventEncodings.PROTOBUF, FrameKind.EVENT);
    }
}

package io.watchfanout.fanout.frame;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The hand-written JSON encoder prints what JsonFormat prints and parses back to the same message. */
class ProtoJsonTest {
    private final Random random = new Random(42);

    @Test
    void randomWatchEventsParseBackEqualAndMatchJsonFormatByteForByte() throws Exception {
        JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace();
        for (int i = 0; i < 3000; i++) {
            WatchEvent e = randomWatchEvent();
            String ours = new String(ProtoJson.toJson(e), StandardCharsets.UTF_8);
            assertThat(Frames.parseJsonLine(ours)).as("parse-back of %s", ours).isEqualTo(e);
            if (!e.hasStatus()) {
                // Statuses may hold non-ASCII text that we escape and JsonFormat does not; the rest is identical.
                assertThat(ours).isEqualTo(printer.print(e));
            }
        }
    }

    @Test
    void keyValueListAndStatusParseBack() throws Exception {
        for (int i = 0; i < 200; i++) {
            KeyValueList.Builder list = KeyValueList.newBuilder()
                    .setResourceVersion(random.nextInt(3) == 0 ? 0 : random.nextLong())
                    .setContinue(random.nextBoolean() ? "" : randomString());
            if (random.nextBoolean()) {
                list.setRemainingItemCount(random.nextInt(3) == 0 ? 0 : random.nextLong());
            }
            int n = random.nextInt(4);
            for (int k = 0; k < n; k++) {
                list.addKvs(randomKv());
            }
            KeyValueList l = list.build();
            KeyValueList.Builder back = KeyValueList.newBuilder();
            JsonFormat.parser().merge(new String(ProtoJson.toJson(l), StandardCharsets.UTF_8), back);
            assertThat(back.build()).isEqualTo(l);
            Status s = Status.newBuilder()
                    .setCode(random.nextInt(600))
                    .setReason(randomString())
                    .setMessage(randomString())
                    .build();
            Status.Builder sb = Status.newBuilder();
            JsonFormat.parser().merge(new String(ProtoJson.toJson(s), StandardCharsets.UTF_8), sb);
            assertThat(sb.build()).isEqualTo(s);
        }
    }

    @Test
    void edgeCases() throws Exception {
        WatchEvent empty = WatchEvent.getDefaultInstance();
        assertThat(new String(ProtoJson.toJson(empty), StandardCharsets.UTF_8)).isEqualTo("{}");
        WatchEvent emptyObject =
                WatchEvent.newBuilder().setObject(KeyValue.getDefaultInstance()).build();
        assertThat(new String(ProtoJson.toJson(emptyObject), StandardCharsets.UTF_8))
                .isEqualTo("{\"object\":{}}");
        WatchEvent extremes = WatchEvent.newBuilder()
                .setType(WatchEvent.Type.MODIFIED)
                .setObject(KeyValue.newBuilder()
                        .setKey(ByteString.copyFrom(new byte[] {0, (byte) 0xff, (byte) 0x80}))
                        .setLease(Long.MIN_VALUE)
                        .setVersion(Long.MAX_VALUE)
                        .setCreateRevision(-1))
                .setResourceVersion(Long.MAX_VALUE)
                .setIndex(Integer.MIN_VALUE)
                .setCount(Integer.MAX_VALUE)
                .build();
        assertThat(Frames.parseJsonLine(new String(ProtoJson.toJson(extremes), StandardCharsets.UTF_8)))
                .isEqualTo(extremes);
        assertThat(new String(ProtoJson.toJson(extremes), StandardCharsets.UTF_8))
                .isEqualTo(
                        JsonFormat.printer().omittingInsignificantWhitespace().print(extremes));
    }

    private WatchEvent randomWatchEvent() {
        WatchEvent.Builder b = WatchEvent.newBuilder();
        if (random.nextInt(6) != 0) {
            b.setType(WatchEvent.Type.forNumber(random.nextInt(6)));
        }
        if (random.nextInt(4) != 0) {
            b.setObject(randomKv());
        }
        if (random.nextBoolean()) {
            b.setResourceVersion(randomLong());
        }
        b.setInitialEventsEnd(random.nextInt(5) == 0);
        if (random.nextInt(5) == 0) {
            b.setStatus(Status.newBuilder()
                    .setCode(random.nextInt(600))
                    .setReason(randomString())
                    .setMessage(randomString()));
        }
        if (random.nextBoolean()) {
            b.setIndex(random.nextInt());
            b.setCount(random.nextInt());
        }
        return b.build();
    }

    private KeyValue randomKv() {
        KeyValue.Builder kv = KeyValue.newBuilder();
        if (random.nextInt(5) != 0) {
            kv.setKey(randomBytes());
        }
        if (random.nextBoolean()) {
            kv.setCreateRevision(randomLong());
        }
        if (random.nextBoolean()) {
            kv.setModRevision(randomLong());
        }
        if (random.nextBoolean()) {
            kv.setVersion(randomLong());
        }
        if (random.nextBoolean()) {
            kv.setValue(random.nextInt(4) == 0 ? ByteString.copyFromUtf8(randomString()) : randomBytes());
        }
        if (random.nextBoolean()) {
            kv.setLease(random.nextBoolean() ? -Math.abs(randomLong()) : randomLong());
        }
        return kv.build();
    }

    private long randomLong() {
        switch (random.nextInt(4)) {
            case 0:
                return random.nextLong();
            case 1:
                return random.nextInt(1000);
            case 2:
                return Long.MAX_VALUE - random.nextInt(3);
            default:
                return Long.MIN_VALUE + random.nextInt(3);
        }
    }

    private ByteString randomBytes() {
        byte[] b = new byte[random.nextInt(3) == 0 ? random.nextInt(4) : random.nextInt(300)];
        random.nextBytes(b);
        return ByteString.copyFrom(b);
    }

    private String randomString() {
        StringBuilder sb = new StringBuilder();
        int n = random.nextInt(20);
        String pool = "aZ09 \"\\/\n\t\r\u0000\u001f<>&='é€\uD83D\uDE00日本";
        for (int i = 0; i < n; i++) {
            sb.append(pool.charAt(random.nextInt(pool.length())));
        }
        return sb.toString();
    }
}

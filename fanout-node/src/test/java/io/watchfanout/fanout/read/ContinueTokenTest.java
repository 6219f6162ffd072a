package io.watchfanout.fanout.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.watchfanout.fanout.read.ContinueToken.Form;
import io.watchfanout.fanout.watch.ListPage;
import io.watchfanout.schema.v1.KeyValue;
import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class ContinueTokenTest {
    private static final ByteString KEY = ByteString.copyFrom(new byte[] {'/', 0, (byte) 0xff, 'k'});

    @Test
    void roundTripsWithAndWithoutTheRemainingCount() throws Exception {
        for (ContinueToken t : List.of(
                new ContinueToken(1, KEY, 1),
                new ContinueToken(Long.MAX_VALUE, KEY, 1L << 40),
                new ContinueToken(7, ByteString.EMPTY, 3),
                new ContinueToken(9, KEY))) {
            String text = t.encode(Form.COMPACT);
            assertThat(text).matches("[A-Za-z0-9_-]+");
            assertThat(ContinueToken.decode(text, Form.COMPACT)).isEqualTo(t);
        }
        assertThat(new ContinueToken(9, KEY).remaining()).isEqualTo(-1);
    }

    @Test
    void aTwoFieldTokenOfAnOlderNodeDecodesWithoutACount() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CodedOutputStream out = CodedOutputStream.newInstance(bytes);
        out.writeUInt64NoTag(5);
        out.writeBytesNoTag(ByteString.copyFromUtf8("/registry/pods/default/web-2"));
        out.flush();
        // A token as nodes made them before the count (the README's example of that time).
        String old = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes.toByteArray());
        assertThat(old).isEqualTo("BRwvcmVnaXN0cnkvcG9kcy9kZWZhdWx0L3dlYi0y");
        assertThat(ContinueToken.decode(old, Form.COMPACT))
                .isEqualTo(new ContinueToken(5, ByteString.copyFromUtf8("/registry/pods/default/web-2"), -1));
        // The README's example today: the same token with the count after it.
        assertThat(new ContinueToken(5, ByteString.copyFromUtf8("/registry/pods/default/web-2"), 1)
                        .encode(Form.COMPACT))
                .isEqualTo(old + "AQ");
    }

    @Test
    void refusesWhatItDidNotMake() {
        String valid = new ContinueToken(3, KEY, 2).encode(Form.COMPACT);
        for (String bad : List.of(
                "",
                "!!",
                "AA",
                valid + "AA",
                new ContinueToken(3, KEY, 0).encode(Form.COMPACT),
                Base64.getUrlEncoder().withoutPadding().encodeToString(new byte[] {0, 0}))) {
            assertThatThrownBy(() -> ContinueToken.decode(bad, Form.COMPACT))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void laterPagesCountDownFromTheTokenAndDropACountThePageContradicts() {
        KeyValue kv = KeyValue.getDefaultInstance();
        ListPage two = new ListPage(List.of(kv, kv), 3, KEY);
        assertThat(new ContinueToken(3, KEY, 5).remainingAfter(two.kvs().size()))
                .isEqualTo(3);
        assertThat(new ContinueToken(3, KEY).remainingAfter(two.kvs().size())).isEqualTo(-1);
        assertThat(new ContinueToken(3, KEY, 2).remainingAfter(two.kvs().size()))
                .as("a forged count")
                .isEqualTo(-1);
    }
}

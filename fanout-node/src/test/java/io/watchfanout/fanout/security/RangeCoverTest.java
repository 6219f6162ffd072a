package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import java.util.List;
import org.junit.jupiter.api.Test;

class RangeCoverTest {
    private static ByteString k(String s) {
        return ByteString.copyFromUtf8(s);
    }

    private static KeyRange range(String key, String end) {
        return KeyRange.of(k(key), k(end));
    }

    @Test
    void adjacentGrantsCoverARangeThatSpansBoth() {
        RangeCover cover = RangeCover.of(List.of(range("/a", "/c"), range("/c", "/e")));

        assertThat(cover.covers(range("/b", "/d"))).isTrue();
        assertThat(cover.covers(range("/a", "/e"))).isTrue();
        assertThat(cover.covers(range("/a", "/f"))).isFalse();
    }

    @Test
    void overlappingGrantsMergeInAnyOrder() {
        RangeCover cover = RangeCover.of(List.of(range("/c", "/f"), range("/a", "/d"), range("/b", "/c")));

        assertThat(cover.covers(range("/a", "/f"))).isTrue();
        assertThat(cover.covers(KeyRange.single(k("/e")))).isTrue();
    }

    @Test
    void aGapBetweenGrantsIsNotCovered() {
        RangeCover cover = RangeCover.of(List.of(range("/a", "/b"), range("/c", "/d")));

        assertThat(cover.covers(range("/a", "/d"))).isFalse();
        assertThat(cover.covers(KeyRange.single(k("/b")))).isFalse();
        assertThat(cover.covers(KeyRange.single(k("/c")))).isTrue();
    }

    @Test
    void anOpenEndedGrantCoversEverythingAfterItsStart() {
        RangeCover cover = RangeCover.of(List.of(KeyRange.of(k("/m"), k("\0"))));

        assertThat(cover.covers(KeyRange.of(k("/m"), k("\0")))).isTrue();
        assertThat(cover.covers(KeyRange.of(k("/z"), k("\0")))).isTrue();
        assertThat(cover.covers(range("/m", "/n"))).isTrue();
        assertThat(cover.covers(KeyRange.of(k("/a"), k("\0")))).isFalse();
        assertThat(cover.covers(KeyRange.all())).isFalse();
    }

    @Test
    void anOpenEndedGrantAbsorbsLaterOnes() {
        RangeCover cover = RangeCover.of(List.of(KeyRange.of(k("/b"), k("\0")), range("/a", "/c"), range("/x", "/y")));

        assertThat(cover.covers(KeyRange.of(k("/a"), k("\0")))).isTrue();
    }

    @Test
    void theEmptyPrefixCoversEveryKey() {
        RangeCover cover = RangeCover.of(List.of(KeyRange.prefix(ByteString.EMPTY)));

        assertThat(cover.covers(KeyRange.all())).isTrue();
        assertThat(cover.covers(KeyRange.single(k("/anything")))).isTrue();
    }

    @Test
    void aSingleKeyGrantCoversOnlyThatKey() {
        RangeCover cover = RangeCover.of(List.of(KeyRange.single(k("/a"))));

        assertThat(cover.covers(KeyRange.single(k("/a")))).isTrue();
        assertThat(cover.covers(KeyRange.single(k("/a0")))).isFalse();
        assertThat(cover.covers(KeyRange.prefix(k("/a")))).isFalse();
        // [/a, /a\0) holds exactly the key /a.
        assertThat(cover.covers(KeyRange.of(k("/a"), k("/a\0")))).isTrue();
    }

    @Test
    void aSingleKeyNextToARangeJoinsIt() {
        RangeCover cover = RangeCover.of(List.of(range("/a", "/b"), KeyRange.single(k("/b"))));

        assertThat(cover.covers(KeyRange.of(k("/a"), k("/b\0")))).isTrue();
    }

    @Test
    void anOpenEndedRequestFromInsideAGrantedPrefixIsRefused() {
        // GHSA-xg4h-6gfc-h4m8: key inside the prefix, range end "\0" reaches every later key.
        RangeCover cover = RangeCover.of(List.of(KeyRange.prefix(k("/registry/configmaps/"))));

        assertThat(cover.covers(KeyRange.of(k("/registry/configmaps/a"), k("\0"))))
                .isFalse();
        assertThat(cover.covers(KeyRange.of(k("/registry/configmaps/"), k("\0"))))
                .isFalse();
        assertThat(cover.covers(KeyRange.prefix(k("/registry/configmaps/a")))).isTrue();
    }

    @Test
    void nothingIsCoveredByNoGrants() {
        assertThat(RangeCover.NONE.covers(KeyRange.single(k("/a")))).isFalse();
        assertThat(RangeCover.of(List.of()).isEmpty()).isTrue();
    }
}

package io.watchfanout.bench.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.bench.chaos.Verifier.Ev;
import io.watchfanout.bench.chaos.Verifier.Result;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class VerifierTest {
    private static final Ev A = new Ev(5, "/chaos/a", Verifier.ADDED, 11);
    private static final Ev B = new Ev(6, "/chaos/b", Verifier.ADDED, 12);
    private static final Ev C = new Ev(6, "/chaos/c", Verifier.MODIFIED, 13); // same revision as B: a transaction
    private static final Ev D = new Ev(7, "/chaos/a", Verifier.DELETED, 0);
    private static final Ev E = new Ev(8, "/other/x", Verifier.ADDED, 14);
    private static final List<Ev> HISTORY = List.of(A, B, C, D, E);

    @Test
    void exactCopyIsOk() {
        Result r = Verifier.compare("w", List.of(A, B, C, D), List.of(A, B, C, D));
        assertThat(r.ok()).isTrue();
        assertThat(r.expected()).isEqualTo(4);
        assertThat(r.received()).isEqualTo(4);
        assertThat(r.examples()).isEmpty();
    }

    @Test
    void missingEventIsLost() {
        Result r = Verifier.compare("w", List.of(A, B, C, D), List.of(A, B, D));
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.duplicated()).isZero();
        assertThat(r.unexpected()).isZero();
        assertThat(r.ok()).isFalse();
        assertThat(r.examples()).containsExactly("w: lost 6 MODIFIED /chaos/c");
    }

    @Test
    void revisionSentAgainWholeIsDuplicated() {
        // a resume from a point before revision 6 that the client had already taken whole
        Result r = Verifier.compare("w", List.of(A, B, C, D), List.of(A, B, C, B, C, D));
        assertThat(r.duplicated()).isEqualTo(2);
        assertThat(r.outOfOrder()).isZero(); // revision 6 again right after 6: not lower
        assertThat(r.lost()).isZero();
        assertThat(r.ok()).isFalse();
    }

    @Test
    void olderRevisionAfterNewerIsOutOfOrder() {
        Result r = Verifier.compare("w", List.of(A, B, C, D), List.of(A, B, C, A, D));
        assertThat(r.outOfOrder()).isEqualTo(1);
        assertThat(r.duplicated()).isEqualTo(1);
    }

    @Test
    void wrongValueIsLostAndUnexpected() {
        Ev wrong = new Ev(6, "/chaos/c", Verifier.MODIFIED, 99);
        Result r = Verifier.compare("w", List.of(A, B, C), List.of(A, B, wrong));
        assertThat(r.lost()).isEqualTo(1);
        assertThat(r.unexpected()).isEqualTo(1);
        assertThat(r.duplicated()).isZero();
    }

    @Test
    void eventNotInHistoryTwiceIsOneUnexpectedOneDuplicate() {
        Ev ghost = new Ev(9, "/chaos/z", Verifier.ADDED, 1);
        Result r = Verifier.compare("w", List.of(A), List.of(A, ghost, ghost));
        assertThat(r.unexpected()).isEqualTo(1);
        assertThat(r.duplicated()).isEqualTo(1);
    }

    @Test
    void expectedForTakesPrefixRangeAndLeavesOutRelistGaps() {
        assertThat(Verifier.expectedFor(HISTORY, "/chaos/", 4, 100, List.of())).containsExactly(A, B, C, D);
        assertThat(Verifier.expectedFor(HISTORY, "/chaos/", 5, 6, List.of())).containsExactly(B, C);
        List<long[]> gaps = new ArrayList<>();
        gaps.add(new long[] {5, 6}); // lost its place at 5, listed at 6
        assertThat(Verifier.expectedFor(HISTORY, "/chaos/", 4, 100, gaps)).containsExactly(A, D);
    }

    @Test
    void resultsAddUp() {
        Result a = Verifier.compare("w1", List.of(A, B), List.of(A));
        Result b = Verifier.compare("w2", List.of(A, B), List.of(A, B, B));
        Result sum = a.plus(b);
        assertThat(sum.expected()).isEqualTo(4);
        assertThat(sum.received()).isEqualTo(4);
        assertThat(sum.lost()).isEqualTo(1);
        assertThat(sum.duplicated()).isEqualTo(1);
        assertThat(sum.examples()).hasSize(2);
    }
}

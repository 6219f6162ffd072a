package io.watchfanout.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.Resync;
import org.junit.jupiter.api.Test;

class RevisionChainTest {

    private static EventsRecord event(long rev, int index, int count, long prev) {
        return EventsRecord.newBuilder()
                .setEvent(Event.newBuilder()
                        .setRevision(rev)
                        .setIndex(index)
                        .setCount(count)
                        .setPrevRevision(prev))
                .build();
    }

    private static EventsRecord entry(long rev, int index, int count) {
        return EventsRecord.newBuilder()
                .setEvent(Event.newBuilder()
                        .setRevision(rev)
                        .setIndex(index)
                        .setCount(count)
                        .setPrevRevision(rev)
                        .setResync(true))
                .build();
    }

    private static EventsRecord progress(long rev, long prev) {
        return EventsRecord.newBuilder()
                .setProgress(Progress.newBuilder().setRevision(rev).setPrevRevision(prev))
                .build();
    }

    private static EventsRecord resync(long rev, long prev, long entries) {
        return EventsRecord.newBuilder()
                .setResync(Resync.newBuilder()
                        .setRevision(rev)
                        .setPrevRevision(prev)
                        .setEntryCount(entries))
                .build();
    }

    @Test
    void acceptsAnUnbrokenChain() {
        RevisionChain chain = new RevisionChain();
        chain.accept(resync(5, 0, 2));
        assertThat(chain.atRevisionBoundary()).isFalse();
        chain.accept(entry(5, 0, 2));
        chain.accept(entry(5, 1, 2));
        assertThat(chain.atRevisionBoundary()).isTrue();
        chain.accept(event(6, 0, 1, 5));
        chain.accept(event(8, 0, 3, 6));
        chain.accept(event(8, 1, 3, 8));
        assertThat(chain.atRevisionBoundary()).isFalse();
        chain.accept(event(8, 2, 3, 8));
        chain.accept(progress(12, 8));
        assertThat(chain.lastRevision()).isEqualTo(12);
        assertThat(chain.atRevisionBoundary()).isTrue();
    }

    @Test
    void acceptsHeartbeatsThatRepeatTheLastRevisionButNeverGoBack() {
        RevisionChain chain = new RevisionChain(6);
        chain.accept(event(7, 0, 1, 6));
        chain.accept(progress(7, 7));
        chain.accept(progress(7, 7));
        chain.accept(event(8, 0, 1, 7));
        assertThat(chain.lastRevision()).isEqualTo(8);
        assertThatThrownBy(() -> chain.accept(progress(7, 8))).isInstanceOf(RevisionChainException.class);
    }

    @Test
    void rejectsAGap() {
        RevisionChain chain = new RevisionChain(6);
        assertThatThrownBy(() -> chain.accept(event(9, 0, 1, 8)))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("prev_revision 8")
                .hasMessageContaining("a gap");
        assertThat(chain.lastRevision()).isEqualTo(6);
    }

    @Test
    void rejectsARepeat() {
        RevisionChain chain = new RevisionChain();
        chain.accept(event(7, 0, 1, 6));
        assertThatThrownBy(() -> chain.accept(event(7, 0, 1, 6))).isInstanceOf(RevisionChainException.class);
        assertThatThrownBy(() -> chain.accept(event(7, 0, 1, 7)))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("repeat");
    }

    @Test
    void rejectsARevisionSplitByAnotherRecord() {
        RevisionChain chain = new RevisionChain(1);
        chain.accept(event(2, 0, 2, 1));
        assertThatThrownBy(() -> chain.accept(progress(3, 2)))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("incomplete");
        assertThatThrownBy(() -> chain.accept(event(3, 0, 1, 2)))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("incomplete");
    }

    @Test
    void rejectsAResyncEntryWithoutResync() {
        RevisionChain chain = new RevisionChain(4);
        assertThatThrownBy(() -> chain.accept(entry(4, 0, 1))).isInstanceOf(RevisionChainException.class);
    }

    @Test
    void rejectsAnEmptyRecord() {
        RevisionChain chain = new RevisionChain();
        assertThatThrownBy(() -> chain.accept(EventsRecord.getDefaultInstance()))
                .isInstanceOf(RevisionChainException.class)
                .hasMessageContaining("BODY_NOT_SET");
    }
}

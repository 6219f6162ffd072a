package io.watchfanout.fanout.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.KafkaClientSettings;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.Resync;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * What a record of the events topic says about the records before it, and so where a read of the
 * events after a revision may start: the first event of revision R and a resync at R bound them
 * below R; a progress record at R follows the events of R itself (a heartbeat repeats the last
 * write's revision), so it bounds them below R + 1 only, and the revision→offset index notes it so.
 */
class EventsTopicTest {
    private static EventsRecord event(long rev, int index, int count, boolean resync) {
        return EventsRecord.newBuilder()
                .setEvent(Event.newBuilder()
                        .setRevision(rev)
                        .setIndex(index)
                        .setCount(count)
                        .setResync(resync))
                .build();
    }

    private static EventsRecord progress(long rev) {
        return EventsRecord.newBuilder()
                .setProgress(Progress.newBuilder().setRevision(rev).setPrevRevision(rev))
                .build();
    }

    private static EventsRecord resync(long rev) {
        return EventsRecord.newBuilder()
                .setResync(Resync.newBuilder().setRevision(rev).setReason(Resync.Reason.INITIAL))
                .build();
    }

    @Test
    void eachRecordBoundsTheRevisionsBeforeIt() {
        assertThat(EventsTopic.revisionsBelow(event(7, 0, 2, false))).isEqualTo(7);
        assertThat(EventsTopic.revisionsBelow(event(7, 1, 2, false))).isEqualTo(-1);
        assertThat(EventsTopic.revisionsBelow(event(7, 0, 1, true))).isEqualTo(-1);
        assertThat(EventsTopic.revisionsBelow(resync(1))).isEqualTo(1);
        assertThat(EventsTopic.revisionsBelow(progress(7))).isEqualTo(8);
    }

    @Test
    void theFloorOfTheTopicsFirstRecord() {
        // An initial resync at 1 first: every revision from 2 on is in the topic (cursor 1, etcd's start_revision 2).
        assertThat(EventsTopic.floorOf(resync(1))).isEqualTo(1);
        assertThat(EventsTopic.floorOf(event(5, 0, 1, false))).isEqualTo(4);
        assertThat(EventsTopic.floorOf(event(5, 1, 2, false))).isEqualTo(5);
        assertThat(EventsTopic.floorOf(progress(5))).isEqualTo(5);
    }

    @Test
    void aReadOfTheRevisionsAfterAHeartbeatsRevisionMinusOneDoesNotStartAtTheHeartbeat() {
        try (KafkaHistory h =
                new KafkaHistory("127.0.0.1:9", KafkaClientSettings.NONE, "t", "n", () -> 0, 1, 1, Duration.ZERO)) {
            // The first record the feed saw is a heartbeat at 5, after the events of 5 (not seen).
            h.noteRecord(progress(5), 40);
            assertThat(h.index().startOffset(4))
                    .as("after 4: revision 5 is before offset 40")
                    .isEqualTo(-1);
            assertThat(h.index().startOffset(5)).isEqualTo(40);
        }
    }

    @Test
    void theIndexStartsAtTheInitialResync() {
        try (KafkaHistory h =
                new KafkaHistory("127.0.0.1:9", KafkaClientSettings.NONE, "t", "n", () -> 0, 1, 1, Duration.ZERO)) {
            h.noteRecord(resync(1), 0);
            assertThat(h.index().startOffset(0)).isEqualTo(0);
            assertThat(h.index().startOffset(1)).isEqualTo(0);
        }
    }
}

package io.watchfanout.ingester.publish;

import io.watchfanout.common.KeyRange;
import io.watchfanout.ingester.etcd.WatchBatch;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.Progress;
import io.watchfanout.schema.v1.StateDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns the responses of a whole-keyspace etcd watch into events-topic records: checks
 * that revisions are dense, keeps the events of the watched range, numbers each revision's
 * events ({@code index}/{@code count}), chains every record to the one before it
 * ({@code prev_revision}), and adds a {@link Progress} record when revisions outside the
 * range (or no revisions at all) moved the proven revision past the last record.
 *
 * <p>Why dense: in a whole-keyspace watch every etcd revision holds at least one event, so
 * the next revision seen must be the last one + 1; anything else means the watch lost or
 * repeated events (docs/ARCHITECTURE.md, "Ingester"). Progress never runs ahead of what this
 * check has proven: a progress notification whose header revision is ahead of the last
 * revision seen (etcd issue 15220 on etcd before 3.4.25/3.5.8) does not advance it.
 *
 * <p>Assumes etcd delivers all events of one revision in one watch response, as it does
 * for watches without fragmentation.
 *
 * <p>Not thread-safe: owned by the publisher thread.
 */
public final class RevisionAssembler {
    private final KeyRange range;
    /** Every revision up to this has been seen, densely, since the watch started. */
    private long provenRevision;
    /** Revision of the last record handed out, the next record's prev_revision. */
    private long lastRecordRevision;

    private final List<KeyedRecord> pending = new ArrayList<>();

    /**
     * @param range the watched key range
     * @param lastPublished the last revision published (everything at or below it is in
     *     the topic); the watch must start at {@code lastPublished + 1}
     */
    public RevisionAssembler(KeyRange range, long lastPublished) {
        this.range = range;
        this.provenRevision = lastPublished;
        this.lastRecordRevision = lastPublished;
    }

    /** The highest revision proven complete so far (published or pending). */
    public long provenRevision() {
        return provenRevision;
    }

    /** Number of records waiting for {@link #drain}. */
    public int pendingRecords() {
        return pending.size();
    }

    /**
     * Accepts one watch response. Events at or below the proven revision are dropped as
     * repeats of what was already seen.
     *
     * @throws DenseRevisionException when the response skips a revision; the assembler is
     *     then unusable and must be replaced after re-watching
     */
    public void accept(WatchBatch batch) throws DenseRevisionException {
        List<Event> events = batch.events();
        int i = 0;
        while (i < events.size()) {
            long revision = events.get(i).getRevision();
            int end = i;
            while (end < events.size() && events.get(end).getRevision() == revision) {
                end++;
            }
            if (revision > provenRevision) {
                if (revision != provenRevision + 1) {
                    throw new DenseRevisionException(provenRevision + 1, revision);
                }
                addRevision(events.subList(i, end), revision, batch.receivedAtMillis());
                provenRevision = revision;
            }
            i = end;
        }
    }

    /**
     * Accepts the events of one revision that the watch skipped and that were rebuilt from
     * range reads ({@link SkippedRevision}). Advances the proven revision even when none of
     * the events lies in the range.
     *
     * @param revision the proven revision + 1
     * @param events the revision's events, each with {@code revision} set to it
     * @throws IllegalArgumentException when {@code revision} is not the proven revision + 1
     */
    public void acceptRebuilt(long revision, List<Event> events) {
        if (revision != provenRevision + 1) {
            throw new IllegalArgumentException(
                    "rebuilt revision " + revision + " (expected: " + (provenRevision + 1) + ")");
        }
        addRevision(events, revision, 0);
        provenRevision = revision;
    }

    private void addRevision(List<Event> events, long revision, long receivedAtMillis) {
        int count = 0;
        for (Event e : events) {
            if (range.contains(e.getKv().getKey())) {
                count++;
            }
        }
        if (count == 0) {
            return;
        }
        int index = 0;
        for (Event e : events) {
            if (!range.contains(e.getKv().getKey())) {
                continue;
            }
            Event chained = e.toBuilder()
                    .setIndex(index)
                    .setCount(count)
                    .setPrevRevision(index == 0 ? lastRecordRevision : revision)
                    .build();
            pending.add(new KeyedRecord(
                    e.getKv().getKey().toByteArray(),
                    EventsRecord.newBuilder().setEvent(chained).build(),
                    revision,
                    receivedAtMillis));
            index++;
        }
        lastRecordRevision = revision;
    }

    /**
     * Hands out the records of every complete revision accepted so far, followed by a
     * progress record when the proven revision has moved past the last event record.
     *
     * @param withProgress whether to add that progress record
     * @return the records in topic order; empty when there is nothing new
     */
    public List<KeyedRecord> drain(boolean withProgress) {
        if (withProgress && provenRevision > lastRecordRevision) {
            pending.add(new KeyedRecord(
                    new byte[0],
                    EventsRecord.newBuilder()
                            .setProgress(Progress.newBuilder()
                                    .setRevision(provenRevision)
                                    .setPrevRevision(lastRecordRevision))
                            .build(),
                    provenRevision));
            lastRecordRevision = provenRevision;
        }
        List<KeyedRecord> out = new ArrayList<>(pending);
        pending.clear();
        return out;
    }

    /**
     * A heartbeat: a progress record at the proven revision even when it did not move
     * ({@code prev_revision = revision} then), so that readers see that the feed is alive
     * on an idle etcd. Call only with nothing pending.
     *
     * @throws IllegalStateException when records are pending
     */
    public KeyedRecord heartbeat() {
        if (!pending.isEmpty()) {
            throw new IllegalStateException(pending.size() + " records pending");
        }
        KeyedRecord record = new KeyedRecord(
                new byte[0],
                EventsRecord.newBuilder()
                        .setProgress(Progress.newBuilder()
                                .setRevision(provenRevision)
                                .setPrevRevision(lastRecordRevision))
                        .build(),
                provenRevision);
        lastRecordRevision = provenRevision;
        return record;
    }

    /**
     * A progress record that carries a digest of the watched range ({@code Progress.digest}),
     * otherwise a heartbeat: at the proven revision, chained to the last record. Readers compare
     * their state at the digest's revision with it. Call only with nothing pending.
     *
     * @param digest the range as etcd held it at a revision no newer than the proven one
     * @throws IllegalStateException when records are pending
     * @throws IllegalArgumentException when the digest is newer than the proven revision
     */
    public KeyedRecord digest(StateDigest digest) {
        if (digest.getRevision() > provenRevision) {
            throw new IllegalArgumentException(
                    "digest at revision " + digest.getRevision() + " after the proven revision " + provenRevision);
        }
        KeyedRecord heartbeat = heartbeat();
        EventsRecord record = heartbeat.value().toBuilder()
                .setProgress(heartbeat.value().getProgress().toBuilder().setDigest(digest))
                .build();
        return new KeyedRecord(heartbeat.key(), record, heartbeat.revision());
    }

    /**
     * Drains at most {@code maxRecords} records, cutting only between revisions (a revision
     * larger than the limit comes whole). Progress is not added.
     */
    public List<KeyedRecord> drainUpTo(int maxRecords) {
        if (pending.size() <= maxRecords) {
            return drain(false);
        }
        int cut = maxRecords;
        while (cut > 0 && pending.get(cut).revision() == pending.get(cut - 1).revision()) {
            cut--;
        }
        if (cut == 0) {
            long revision = pending.get(0).revision();
            cut = 1;
            while (cut < pending.size() && pending.get(cut).revision() == revision) {
                cut++;
            }
        }
        List<KeyedRecord> head = new ArrayList<>(pending.subList(0, cut));
        pending.subList(0, cut).clear();
        return head;
    }
}

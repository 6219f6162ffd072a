package io.watchfanout.ingester.publish;

import io.watchfanout.schema.v1.EventsRecord;

/**
 * A record for the events topic with its Kafka key (the etcd key; empty for progress and
 * resync records).
 *
 * @param key the Kafka record key
 * @param value the record
 * @param revision the etcd revision the record belongs to
 * @param timestampMillis the Kafka record timestamp: when the ingester received the event
 *     from etcd (epoch milliseconds), or 0 for the time it is sent
 */
public record KeyedRecord(byte[] key, EventsRecord value, long revision, long timestampMillis) {

    /** A record stamped with the time it is sent. */
    public KeyedRecord(byte[] key, EventsRecord value, long revision) {
        this(key, value, revision, 0);
    }
}

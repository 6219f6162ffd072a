package io.watchfanout.ingester.publish;

import io.watchfanout.schema.v1.EventsRecord;

/**
 * A record for the events topic with its Kafka key (the etcd key; empty for progress and
 * resync records).
 *
 * @param key the Kafka record key
 * @param value the record
 * @param revision the etcd revision the record belongs to
 */
public record KeyedRecord(byte[] key, EventsRecord value, long revision) {}

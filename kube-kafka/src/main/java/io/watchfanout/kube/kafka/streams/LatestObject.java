package io.watchfanout.kube.kafka.streams;

import org.apache.kafka.common.serialization.Serializer;

/**
 * A latest-object topic's record on its way to the sink: the topic (a tombstone names no resource
 * by itself) and the object's JSON, null for a tombstone.
 *
 * @param topic the latest-object topic of the object's resource
 * @param object the object as kube-apiserver's JSON, owned by this record; null after a deletion
 */
record LatestObject(String topic, byte[] object) {

    /** Writes {@link #object()}; null (a tombstone) after a deletion. */
    static final class ValueSerializer implements Serializer<LatestObject> {
        @Override
        public byte[] serialize(String topic, LatestObject value) {
            return value == null ? null : value.object();
        }
    }
}

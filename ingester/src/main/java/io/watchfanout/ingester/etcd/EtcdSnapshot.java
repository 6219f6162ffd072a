package io.watchfanout.ingester.etcd;

import io.watchfanout.schema.v1.KeyValue;
import java.util.List;

/**
 * Every key-value of a range at one etcd revision, in key order.
 *
 * @param revision the revision all pages were read at
 * @param kvs the key-values in key order
 */
public record EtcdSnapshot(long revision, List<KeyValue> kvs) {}

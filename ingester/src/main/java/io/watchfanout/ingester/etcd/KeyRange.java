package io.watchfanout.ingester.etcd;

import com.google.protobuf.ByteString;

/**
 * The watched key range of an ingester: every key that starts with a prefix (the empty
 * prefix is the whole keyspace). Immutable and thread-safe.
 */
public final class KeyRange {
  private final ByteString prefix;

  /** @param prefix the key prefix; empty for every key */
  public KeyRange(ByteString prefix) {
    this.prefix = prefix;
  }

  /** The key prefix; empty for the whole keyspace. */
  public ByteString prefix() {
    return prefix;
  }

  /** True when {@code key} lies in the range. */
  public boolean contains(ByteString key) {
    return key.startsWith(prefix);
  }

  /**
   * The exclusive end of the range in etcd's convention: the prefix with its last byte
   * below 0xff incremented (trailing 0xff bytes dropped), or {@code "\0"} (every key from the
   * start) when the prefix is empty or all 0xff. Mirrors etcd's {@code clientv3.GetPrefixRangeEnd}.
   */
  public ByteString rangeEnd() {
    byte[] end = prefix.toByteArray();
    for (int i = end.length - 1; i >= 0; i--) {
      if (end[i] != (byte) 0xff) {
        end[i]++;
        return ByteString.copyFrom(end, 0, i + 1);
      }
    }
    return ByteString.copyFrom(new byte[] {0});
  }

  /** The first key of the range: the prefix, or {@code "\0"} for the whole keyspace. */
  public ByteString startKey() {
    return prefix.isEmpty() ? ByteString.copyFrom(new byte[] {0}) : prefix;
  }

  @Override
  public String toString() {
    return prefix.isEmpty() ? "all keys" : "keys with prefix " + io.watchfanout.common.KeyBytes.encode(prefix.toByteArray());
  }
}

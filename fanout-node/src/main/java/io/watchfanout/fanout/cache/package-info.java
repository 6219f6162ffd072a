/**
 * {@link io.watchfanout.fanout.cache.KeyRange}: the key range of a watch or a list, an immutable
 * value. The cache itself is part of the watch core ({@code io.watchfanout.fanout.watch}).
 *
 * <p>Imports: {@code io.watchfanout.common} (printable keys) and protobuf.
 */
package io.watchfanout.fanout.cache;

/**
 * The state materializer: a Kafka Streams application
 * ({@link io.watchfanout.ingester.materializer.StateMaterializer}, {@code exactly_once_v2}) that
 * projects the events topic onto the compacted state topic, with a checkpoint
 * {@code {revision, events_offset}} under the empty key after every complete revision
 * ({@code StateProjection}).
 *
 * <p>Imports: Kafka Streams (the only package that uses it) and the Kafka client library,
 * {@code io.watchfanout.schema}'s Serdes and messages; nothing else of the ingester, no jetcd,
 * no Undertow.
 */
package io.watchfanout.ingester.materializer;

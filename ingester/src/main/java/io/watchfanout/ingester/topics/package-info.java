/**
 * The ingester's Kafka topics: {@link io.watchfanout.ingester.topics.TopicManager} creates the
 * events and state topics when missing and refuses topics with wrong settings
 * ({@link io.watchfanout.ingester.topics.TopicSettings},
 * {@link io.watchfanout.ingester.topics.TopicMisconfiguredException}; docs/ARCHITECTURE.md,
 * "Kafka topics"); {@link io.watchfanout.ingester.topics.TopicReader} reads one partition
 * {@code read_committed} from an offset to the end offset.
 *
 * <p>Imports: the Kafka client library (admin client, consumer) only; nothing else of the
 * ingester, no jetcd, no Undertow.
 */
package io.watchfanout.ingester.topics;

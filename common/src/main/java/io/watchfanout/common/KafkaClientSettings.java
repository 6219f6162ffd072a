package io.watchfanout.common;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

/**
 * The Kafka client settings of {@code --kafka-config FILE}: a Java properties file of Kafka
 * client configuration (security, SSL, SASL and client tuning, e.g.
 * {@code security.protocol=SASL_SSL}, {@code sasl.mechanism=PLAIN}, {@code sasl.jaas.config=...},
 * {@code ssl.truststore.type=PEM}, {@code ssl.truststore.location=/etc/kafka/ca.pem}), given to every
 * Kafka client of a runnable: producers, consumers, admin clients and Kafka Streams.
 *
 * <p>The settings the project itself must control ({@link #REFUSED}: the bootstrap servers, the
 * (de)serializers, the isolation level, transactions and idempotence, group ids, client ids,
 * Kafka Streams' application id and guarantee, ...) are refused, also behind a Kafka Streams
 * client prefix such as {@code producer.}: a file that sets one is an error naming the key.
 *
 * <p>{@link #toString()} names the keys only: values such as {@code sasl.jaas.config} hold
 * passwords. Immutable and thread-safe.
 */
public final class KafkaClientSettings {
    /** No settings: plaintext Kafka. */
    public static final KafkaClientSettings NONE = new KafkaClientSettings(Map.of());

    /** The keys a {@code --kafka-config} file may not set: what the project sets for correctness. */
    public static final Set<String> REFUSED = Set.of(
            "bootstrap.servers",
            "client.id",
            "key.serializer",
            "value.serializer",
            "key.deserializer",
            "value.deserializer",
            "isolation.level",
            "transactional.id",
            "transaction.timeout.ms",
            "enable.idempotence",
            "acks",
            "max.request.size",
            "group.id",
            "group.instance.id",
            "enable.auto.commit",
            "auto.offset.reset",
            "application.id",
            "processing.guarantee",
            "state.dir",
            "default.key.serde",
            "default.value.serde");

    /** Kafka Streams' prefixes of settings for one of its clients: {@code producer.transactional.id} is refused too. */
    private static final List<String> CLIENT_PREFIXES =
            List.of("main.consumer.", "restore.consumer.", "global.consumer.", "consumer.", "producer.", "admin.");

    private final Map<String, String> settings;

    private KafkaClientSettings(Map<String, String> settings) {
        this.settings = Map.copyOf(settings);
    }

    /**
     * Settings given as a map (tests, and the parsed file).
     *
     * @throws IllegalArgumentException naming the first refused key (in key order)
     */
    public static KafkaClientSettings of(Map<String, String> settings) {
        for (String key : new TreeMap<>(settings).keySet()) {
            String bare = key;
            for (String prefix : CLIENT_PREFIXES) {
                if (key.startsWith(prefix)) {
                    bare = key.substring(prefix.length());
                    break;
                }
            }
            if (REFUSED.contains(bare)) {
                throw new IllegalArgumentException(key + " may not be set: watch-fanout sets it itself (only "
                        + "security, ssl, sasl and client tuning settings are taken)");
            }
        }
        return new KafkaClientSettings(settings);
    }

    /**
     * Reads a properties file ({@link Properties#load(Reader)}, UTF-8).
     *
     * @param file the file of {@code --kafka-config}
     * @throws IllegalArgumentException when the file is missing or unreadable, or sets a refused
     *     key; the message names the file and what is wrong
     */
    public static KafkaClientSettings read(Path file) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(file + ": no such file");
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": cannot be read as a properties file (" + e + ")");
        }
        Map<String, String> settings = new TreeMap<>();
        p.stringPropertyNames().forEach(k -> settings.put(k, p.getProperty(k).trim()));
        try {
            return of(settings);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage());
        }
    }

    /** The settings, key → value; values may be secrets, never log them. */
    public Map<String, String> asMap() {
        return settings;
    }

    /**
     * Copies the settings into a client's configuration. Called first: what the client sets
     * afterwards wins, though none of the refused keys can be here anyway.
     *
     * @param clientConfig a Kafka client's {@code Properties} (or any map of its configuration)
     */
    public void applyTo(Map<Object, Object> clientConfig) {
        clientConfig.putAll(settings);
    }

    /** The keys, without their values. */
    @Override
    public String toString() {
        return "KafkaClientSettings" + new TreeMap<>(settings).keySet();
    }
}

package io.watchfanout.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The rebuild and resume scenarios' baseline, run as a fresh child JVM like the node: a plain
 * consumer that reads partition 0 of a topic from the beginning (or from a given offset) to its
 * end offset (read_committed, as the node reads) and does nothing with the records. Prints
 * {@code PLAIN-CONSUMER records=N seconds=S cpu=C}: C = this JVM's CPU seconds from its start to
 * the end of the read (user + system, all threads), for the rebuild scenario's CPU per key.
 */
public final class PlainConsumerMain {
    private PlainConsumerMain() {}

    /** {@code bootstrap topic [fromOffset]}. */
    public static void main(String[] args) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        long t0 = System.nanoTime();
        long records = 0;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(args[1], 0);
            c.assign(List.of(tp));
            if (args.length > 2) {
                c.seek(tp, Long.parseLong(args[2]));
            } else {
                c.seekToBeginning(List.of(tp));
            }
            Map<TopicPartition, Long> end = c.endOffsets(List.of(tp));
            while (c.position(tp) < end.get(tp)) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(500));
                records += rs.count();
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        double cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                        .getProcessCpuTime()
                / 1e9;
        System.out.printf("PLAIN-CONSUMER records=%d seconds=%.3f cpu=%.3f%n", records, seconds, cpu);
    }
}

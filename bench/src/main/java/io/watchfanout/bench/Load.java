package io.watchfanout.bench;

/** A source of writes a {@link Round} drives: etcd puts or events produced straight to Kafka. */
interface Load {
    /** Writes for {@code durationNanos}; {@code rate <= 0} is as fast as the target takes them. */
    void run(double rate, long durationNanos) throws InterruptedException;

    /** Waits up to {@code millis} for outstanding writes. */
    void drain(long millis) throws InterruptedException;

    /** Writes acknowledged so far. */
    long acked();
}

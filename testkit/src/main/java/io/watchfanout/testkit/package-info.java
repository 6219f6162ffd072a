/**
 * Real etcd and Kafka processes, and the tier on them, for integration tests, the benchmarks and
 * the local stack.
 *
 * <ul>
 *   <li>{@link io.watchfanout.testkit.EtcdServer}: the {@code etcd} binary as a child process;</li>
 *   <li>{@link io.watchfanout.testkit.KafkaBroker}: a single-node KRaft Kafka as a child JVM;</li>
 *   <li>{@link io.watchfanout.testkit.KafkaCluster}: three such nodes as one replicated cluster
 *       (a quorum of three voters, replication factor 3, {@code min.insync.replicas} 2), with
 *       kill and restart of one broker and the leader of a topic;</li>
 *   <li>{@link io.watchfanout.testkit.EtcdExtension}, {@link io.watchfanout.testkit.KafkaExtension}:
 *       one shared server of each per test JVM, injected as a parameter, and (etcd) a jetcd client
 *       of it and the test's {@link io.watchfanout.testkit.TestPrefix};</li>
 *   <li>{@link io.watchfanout.testkit.StackLauncher}: the whole tier (etcd, Kafka, the ingester,
 *       fan-out nodes) as child processes, for the local stack, the benchmarks and end-to-end tests;</li>
 *   <li>{@link io.watchfanout.testkit.WatchClient}: a fan-out node's watch stream, read and resumed
 *       as the README says (needs the schema module on the class path);</li>
 *   <li>{@link io.watchfanout.testkit.StorageEnvelope}: a Kubernetes object's bytes as
 *       kube-apiserver stores them in etcd (needs client-java-proto on the class path);</li>
 *   <li>{@link io.watchfanout.testkit.JavaProcess}: any main class as a child JVM (kill -9 tests);</li>
 *   <li>{@link io.watchfanout.testkit.FreePorts}, {@link io.watchfanout.testkit.TopicPrefixes};</li>
 *   <li>{@link io.watchfanout.testkit.ChildProcesses}: the shutdown reaper of every child, with
 *       hooks for a program that stops its children in order (the local stack).</li>
 * </ul>
 *
 * <p>All servers bind 127.0.0.1 only. Work directories live under {@code target/testkit} (system
 * property {@code watchfanout.testkit.dir} to change); process logs are always kept there, data
 * directories are deleted on close unless {@code watchfanout.testkit.keepData=true}. Every child
 * process is killed by a JVM shutdown hook at the latest.
 */
package io.watchfanout.testkit;

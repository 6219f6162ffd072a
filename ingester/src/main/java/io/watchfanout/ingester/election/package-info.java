/**
 * Leader election among ingester replicas through etcd's election API
 * ({@link io.watchfanout.ingester.election.LeaderElection}): a replica leads only while its lease
 * is certainly alive, so that it stops publishing before another one can be elected.
 *
 * <p>Imports: jetcd and gRPC's {@code StreamObserver} (lease keep-alives) only; no Kafka, no
 * Undertow, nothing else of the ingester.
 */
package io.watchfanout.ingester.election;

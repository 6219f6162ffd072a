/**
 * Who is asking and what they may watch (README.md, "Security"; docs/SECURITY.md):
 * {@link io.watchfanout.fanout.security.AccessControl}, the one facade of the front ends, with
 * the authenticators (client certificate, token file, JWT, etcd's own tokens), the policies (a
 * policy file, etcd's roles), the watch limits, the audit trail and the reload of their files.
 * Checks run when a request or watch starts and when the policy changes, never per event.
 *
 * <p>Threads: the front ends call the facade on their own threads; one daemon thread per node
 * reloads files and revokes watches a changed policy no longer allows.
 *
 * <p>Imports: grpc (the etcd channel of {@code --authz=etcd} and etcd's tokens), jetcd's API
 * messages, nimbus-jose-jwt, gson (the policy file), the Prometheus client and the project's
 * {@code common}; neither the watch core nor a front end: they call this package.
 */
package io.watchfanout.fanout.security;

/**
 * TLS of the runnables' listeners: {@link io.watchfanout.common.tls.ServerTls} (the certificate,
 * key and client CAs of {@code --tls-cert-file}, {@code --tls-key-file} and
 * {@code --client-ca-file}, reloaded from disk when they change) and
 * {@link io.watchfanout.common.tls.PeerCertificates} (a client certificate's identity). Plain
 * JSSE: no netty here; the fan-out node hands the key and trust managers to netty itself.
 */
package io.watchfanout.common.tls;

/**
 * The read rules every front end shares, kept once beside the watch core as kube-apiserver's
 * cacher keeps them: {@link io.watchfanout.fanout.read.ListRules} and
 * {@link io.watchfanout.fanout.read.ReadMode} (which revision a get or list answers at, from
 * {@code resourceVersion}, {@code resourceVersionMatch}, {@code limit} and {@code continue}, and
 * the combinations refused), {@link io.watchfanout.fanout.read.ContinueToken} (a paged list's
 * token, in the wire form of each API), and {@link io.watchfanout.fanout.read.RevisionWait}
 * (wait for a revision ahead of the node; learn etcd's revision, then wait, for a consistent read).
 * A front end parses its own parameters, calls these, and answers the outcomes in its own words.
 *
 * <p>Imports: the watch core ({@code io.watchfanout.fanout.watch}), protobuf and gson; no
 * transport, no front end and no Kafka ({@code build/import-control.xml} enforces it).
 */
package io.watchfanout.fanout.read;

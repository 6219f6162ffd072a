/**
 * Label and field selectors, parsed and decided as kube-apiserver does ({@code labels.Parse},
 * {@code fields.ParseSelector}, with its error words): {@link
 * io.watchfanout.kube.codec.select.LabelSelector}, {@link
 * io.watchfanout.kube.codec.select.FieldSelector} (the fields a resource accepts, from its {@code
 * resources} entry), {@link io.watchfanout.kube.codec.select.SelectorException} for a selector that
 * does not parse. Objects' labels and fields are read by the root package ({@code ObjectFields}).
 */
package io.watchfanout.kube.codec.select;

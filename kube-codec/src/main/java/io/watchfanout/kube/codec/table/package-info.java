/**
 * kubectl's tables ({@code as=Table;g=meta.k8s.io;v=v1}): {@link
 * io.watchfanout.kube.codec.table.KubeTable} renders a list or object as kube-apiserver's printers
 * do (the built-in resources' columns, pods' status words, ages in Go's human durations) and a
 * custom resource's {@code additionalPrinterColumns}, evaluated with kubectl's JSONPath subset.
 * {@link io.watchfanout.kube.codec.table.HumanDuration} is the age format on its own, for other
 * printers of objects (the command-line tail's AGE column).
 */
package io.watchfanout.kube.codec.table;

/**
 * kube-apiserver's encryption at rest: {@link
 * io.watchfanout.kube.codec.atrest.EncryptionConfiguration} reads an {@code
 * --encryption-provider-config} file (YAML or JSON, safe loading only) and {@link
 * io.watchfanout.kube.codec.atrest.StorageDecryption} opens what its providers wrote (aescbc, aesgcm
 * with the etcd key as additional data, secretbox; KMS values are errors naming the provider).
 * Reading a file again when it changes is its user's ({@code AtRest} takes a decryption). Imports
 * nothing else of the codec.
 */
package io.watchfanout.kube.codec.atrest;

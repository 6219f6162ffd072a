package io.watchfanout.localstack.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.watchfanout.testkit.EtcdServer;
import io.watchfanout.testkit.StorageEnvelope;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DemoLoadTest {
    @Test
    void writesKubernetesObjectsAsStoredWithTransactionsAndLeasedEvents() throws Exception {
        try (EtcdServer etcd = EtcdServer.builder().build().start();
                Client client = Client.builder().endpoints(etcd.clientUrl()).build()) {
            DemoLoad load = DemoLoad.start(etcd.clientUrl(), 200);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (load.writes() < 300 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            load.close();
            assertThat(load.failures()).isZero();
            assertThat(load.writes()).isGreaterThanOrEqualTo(300);
            assertThat(load.transactions()).isPositive();

            assertThat(keys(client, "/registry/deployments/")).hasSize(5);
            assertThat(keys(client, "/registry/leases/kube-node-lease/")).hasSize(5);
            List<KeyValue> pods = keys(client, "/registry/pods/");
            assertThat(pods).isNotEmpty().hasSizeLessThanOrEqualTo(40);
            assertThat(pods)
                    .as("protobuf envelopes, as kube-apiserver stores built-in objects")
                    .allSatisfy(kv -> assertThat(kv.getValue().startsWith(ByteSequence.from(StorageEnvelope.magic())))
                            .isTrue());
            assertThat(keys(client, "/registry/namespaces/")).hasSize(6);
            assertThat(keys(client, "/registry/minions/")).hasSize(5);
            assertThat(keys(client, "/registry/apiextensions.k8s.io/customresourcedefinitions/"))
                    .singleElement()
                    .satisfies(kv -> assertThat(kv.getValue().toString(StandardCharsets.UTF_8))
                            .startsWith("{\"kind\":\"CustomResourceDefinition\""));
            assertThat(keys(client, "/registry/demo.example.com/backups/"))
                    .hasSize(4)
                    .allSatisfy(kv -> assertThat(kv.getValue().toString(StandardCharsets.UTF_8))
                            .startsWith("{\"apiVersion\":\"demo.example.com/v1\""));
            List<KeyValue> events = keys(client, "/registry/events/");
            assertThat(events)
                    .isNotEmpty()
                    .allSatisfy(kv -> assertThat(kv.getLease()).isPositive());
        }
    }

    /** The key-values under {@code prefix}, read from etcd. */
    static List<KeyValue> keys(Client client, String prefix) throws Exception {
        return client.getKVClient()
                .get(
                        ByteSequence.from(prefix, StandardCharsets.UTF_8),
                        GetOption.builder().isPrefix(true).build())
                .get(10, TimeUnit.SECONDS)
                .getKvs();
    }
}

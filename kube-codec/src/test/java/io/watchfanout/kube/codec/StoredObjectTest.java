package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The storage form of a value, told from its first bytes as kube-apiserver writes them. */
class StoredObjectTest {
    @Test
    void protobufEnvelopeNamesItsKindAndLocatesTheObject() {
        byte[] stored = StoredObjects.deployment("shop", "web", 3);
        StoredObject object = StoredObject.of(stored, 0, stored.length);
        assertThat(object.encoding()).isEqualTo(StoredObject.StorageEncoding.PROTOBUF);
        assertThat(object.apiVersion()).isEqualTo("apps/v1");
        assertThat(object.kind()).isEqualTo("Deployment");
        assertThat(object.rawOffset()).isGreaterThan(4);
        assertThat(object.rawOffset() + object.rawLength()).isLessThanOrEqualTo(stored.length);
    }

    @Test
    void jsonCborAndEncryptedValuesAreToldApart() {
        assertThat(of(" {\"kind\":\"Widget\"}").encoding()).isEqualTo(StoredObject.StorageEncoding.JSON);
        byte[] cbor = {(byte) 0xd9, (byte) 0xd9, (byte) 0xf7, (byte) 0xa1};
        assertThat(StoredObject.of(cbor, 0, cbor.length).encoding()).isEqualTo(StoredObject.StorageEncoding.CBOR);
        StoredObject encrypted = of("k8s:enc:aescbc:v1:key1:\u0001\u0002ciphertext");
        assertThat(encrypted.encoding()).isEqualTo(StoredObject.StorageEncoding.ENCRYPTED);
        assertThat(encrypted.detail()).isEqualTo("k8s:enc:aescbc:v1:key1");
    }

    @Test
    void aBrokenEnvelopeIsMalformedWithAReasonNotAnException() {
        byte[] stored = StoredObjects.secret("shop", "db", "password", new byte[] {1, 2, 3});
        for (int cut = 4; cut < 40; cut++) {
            StoredObject object = StoredObject.of(stored, 0, cut);
            assertThat(object.encoding()).isEqualTo(StoredObject.StorageEncoding.MALFORMED);
            assertThat(object.detail()).isNotEmpty();
        }
        assertThat(of("garbage").encoding()).isEqualTo(StoredObject.StorageEncoding.MALFORMED);
    }

    @Test
    void goDurationsAreFormattedAsGoDoes() {
        assertThat(GoDuration.format(0)).isEqualTo("0s");
        assertThat(GoDuration.format(1)).isEqualTo("1ns");
        assertThat(GoDuration.format(1_500)).isEqualTo("1.5\u00b5s");
        assertThat(GoDuration.format(2_000_000)).isEqualTo("2ms");
        assertThat(GoDuration.format(1_500_000_000L)).isEqualTo("1.5s");
        assertThat(GoDuration.format(300_000_000_000L)).isEqualTo("5m0s");
        assertThat(GoDuration.format(3_723_000_000_000L)).isEqualTo("1h2m3s");
        assertThat(GoDuration.format(-90_000_000_000L)).isEqualTo("-1m30s");
    }

    private static StoredObject of(String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        return StoredObject.of(bytes, 0, bytes.length);
    }
}

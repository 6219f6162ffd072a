package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import io.watchfanout.testkit.StorageEnvelope;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The resourceVersion spliced into stored bytes: the envelope and the bare object parse to exactly
 * the stored object with {@code metadata.resourceVersion} set, unknown fields included, and the
 * envelope keeps kube-apiserver's framing. Over objects made here, and over every serializer
 * fixture of the Kubernetes API (every field of every kind filled) where the fixtures are.
 */
class ResourceVersionSpliceTest {
    static List<Arguments> objects() {
        return List.of(
                Arguments.of("Pod", StoredObjects.pod("shop", "web-0", "node-1", "Running", "web")),
                Arguments.of("ConfigMap", StoredObjects.configMap("shop", "settings", "mode", "fast")),
                Arguments.of("Secret", StoredObjects.secret("shop", "db", "password", new byte[] {0, 1, 2})),
                Arguments.of("Deployment", StoredObjects.deployment("shop", "web", 3)));
    }

    static List<String> fixtures() {
        return KubeFixtures.names();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("objects")
    void splicedObjectIsTheStoredObjectWithItsResourceVersion(String kind, byte[] stored) throws Exception {
        assertSplices(stored);
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    @RequiresKubeFixtures
    void splicedFixtureIsTheStoredObjectWithItsResourceVersion(String name) throws Exception {
        assertSplices(KubeFixtures.protobuf(name));
    }

    private static void assertSplices(byte[] stored) throws Exception {
        for (long revision : new long[] {1, 127, 128, 987_654_321_012L}) {
            assertSplice(stored, 0, stored.length, revision);
        }
    }

    @Test
    void aValueInsideALargerBufferIsReadWithinItsBounds() throws Exception {
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        byte[] padded = new byte[pod.length + 20];
        Arrays.fill(padded, (byte) 0x7f);
        System.arraycopy(pod, 0, padded, 7, pod.length);
        assertSplice(padded, 7, pod.length, 42);
    }

    @Test
    void objectMetaWithoutAResourceVersionFieldGetsOne() throws Exception {
        Descriptor type = KubeSchema.standard().type("v1", "ConfigMap").orElseThrow();
        DynamicMessage meta = DynamicMessage.newBuilder(
                        type.findFieldByName("metadata").getMessageType())
                .setField(type.findFieldByName("metadata").getMessageType().findFieldByName("name"), "a")
                .setField(type.findFieldByName("metadata").getMessageType().findFieldByName("generation"), 9L)
                .build();
        DynamicMessage raw = DynamicMessage.newBuilder(type)
                .setField(type.findFieldByName("metadata"), meta)
                .build();
        byte[] stored = StorageEnvelope.wrap("v1", "ConfigMap", raw);
        assertSplice(stored, 0, stored.length, 5);
    }

    @Test
    void aTruncatedObjectIsRefusedWithAReason() {
        byte[] pod = StoredObjects.pod("shop", "web-0", "node-1", "Running", "web");
        StoredObject object = StoredObject.of(pod, 0, pod.length);
        byte[] cut = pod.clone();
        // Make ObjectMeta's length point past the object's end.
        int meta = object.rawOffset();
        assertThat(cut[meta]).isEqualTo((byte) 0x0a);
        cut[meta + 1] = (byte) 0xff;
        cut[meta + 2] = (byte) 0xff;
        cut[meta + 3] = (byte) 0x7f;
        assertThatThrownBy(() -> ResourceVersionSplice.of(cut, 0, cut.length, object, 1))
                .isInstanceOf(UndecodableObjectException.class)
                .hasMessageContaining("Pod");
    }

    private static void assertSplice(byte[] buf, int off, int len, long revision) throws Exception {
        StoredObject object = StoredObject.of(buf, off, len);
        Descriptor type =
                KubeSchema.standard().type(object.apiVersion(), object.kind()).orElseThrow();
        ResourceVersionSplice splice = ResourceVersionSplice.of(buf, off, len, object, revision);

        DynamicMessage original = DynamicMessage.parseFrom(
                type, Arrays.copyOfRange(buf, object.rawOffset(), object.rawOffset() + object.rawLength()));
        FieldDescriptor metaField = type.findFieldByNumber(1);
        DynamicMessage meta = (DynamicMessage) original.getField(metaField);
        DynamicMessage expected = original.toBuilder()
                .setField(
                        metaField,
                        meta.toBuilder()
                                .setField(meta.getDescriptorForType().findFieldByNumber(6), Long.toString(revision))
                                .build())
                .build();

        byte[] bare = splice.object();
        assertThat(bare).hasSize(splice.objectLength());
        assertThat(DynamicMessage.parseFrom(type, bare)).isEqualTo(expected);

        byte[] envelope = splice.envelope();
        assertThat(envelope).hasSize(splice.envelopeLength());
        StoredObject again = StoredObject.of(envelope, 0, envelope.length);
        assertThat(again.encoding()).isEqualTo(StoredObject.StorageEncoding.PROTOBUF);
        assertThat(again.apiVersion()).isEqualTo(object.apiVersion());
        assertThat(again.kind()).isEqualTo(object.kind());
        assertThat(Arrays.copyOfRange(envelope, again.rawOffset(), again.rawOffset() + again.rawLength()))
                .isEqualTo(bare);
        // Everything after the object (contentEncoding, contentType) is copied as stored.
        assertThat(Arrays.copyOfRange(envelope, again.rawOffset() + again.rawLength(), envelope.length))
                .isEqualTo(Arrays.copyOfRange(buf, object.rawOffset() + object.rawLength(), off + len));
    }
}

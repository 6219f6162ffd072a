package io.watchfanout.ingester.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import org.junit.jupiter.api.Test;

class ByteSequencesTest {
    @Test
    void sharesTheBytesOfTheSequence() {
        ByteString wrapped = ByteString.copyFromUtf8("/registry/pods/default/web-0");
        ByteSequence sequence = ByteSequence.from(wrapped);

        assertThat(ByteSequences.aliasing()).isTrue();
        assertThat(ByteSequences.bytes(sequence)).isSameAs(wrapped);
    }

    @Test
    void keepsEmptyValuesEmpty() {
        assertThat(ByteSequences.bytes(ByteSequence.EMPTY)).isEqualTo(ByteString.EMPTY);
    }
}

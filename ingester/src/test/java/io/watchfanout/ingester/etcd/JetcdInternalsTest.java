package io.watchfanout.ingester.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.ByteSequence;
import org.junit.jupiter.api.Test;

class JetcdInternalsTest {
    @Test
    void sharesTheBytesOfTheSequence() {
        ByteString wrapped = ByteString.copyFromUtf8("/registry/pods/default/web-0");
        ByteSequence sequence = ByteSequence.from(wrapped);

        assertThat(JetcdInternals.aliasing()).isTrue();
        assertThat(JetcdInternals.bytes(sequence)).isSameAs(wrapped);
    }

    @Test
    void keepsEmptyValuesEmpty() {
        assertThat(JetcdInternals.bytes(ByteSequence.EMPTY)).isEqualTo(ByteString.EMPTY);
    }
}

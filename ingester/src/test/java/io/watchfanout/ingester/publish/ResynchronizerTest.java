package io.watchfanout.ingester.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.watchfanout.ingester.etcd.EtcdSnapshot;
import io.watchfanout.schema.RevisionChain;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Resync;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResynchronizerTest {

    private static KeyValue kv(String key, long mod, String value) {
        return KeyValue.newBuilder()
                .setKey(ByteString.copyFromUtf8(key))
                .setCreateRevision(1)
                .setModRevision(mod)
                .setVersion(1)
                .setValue(ByteString.copyFromUtf8(value))
                .build();
    }

    @Test
    void publishesOnlyTheDifferences() {
        KeyValue same = kv("/a", 3, "x");
        KeyValue changedBefore = kv("/b", 4, "old");
        KeyValue changedAfter = kv("/b", 40, "new");
        KeyValue gone = kv("/c", 5, "bye");
        KeyValue added = kv("/d", 41, "hi");
        List<KeyedRecord> records = Resynchronizer.records(
                Map.of(same.getKey(), same, changedBefore.getKey(), changedBefore, gone.getKey(), gone),
                new EtcdSnapshot(50, List.of(same, changedAfter, added)),
                Resync.Reason.COMPACTED,
                45,
                20);

        assertThat(records.get(0).value().getResync().getEntryCount()).isEqualTo(3);
        assertThat(records.get(0).value().getResync().getPrevRevision()).isEqualTo(20);
        Event b = records.get(1).value().getEvent();
        assertThat(b.getKv()).isEqualTo(changedAfter);
        assertThat(b.getPrevKv()).isEqualTo(changedBefore);
        assertThat(records.get(2).value().getEvent().getKv()).isEqualTo(added);
        Event c = records.get(3).value().getEvent();
        assertThat(c.getType()).isEqualTo(Event.Type.DELETE);
        assertThat(c.getKv().getModRevision()).isEqualTo(50);
        assertThat(c.getPrevKv()).isEqualTo(gone);

        RevisionChain chain = new RevisionChain(20);
        records.forEach(r -> chain.accept(r.value()));
        assertThat(chain.atRevisionBoundary()).isTrue();
        assertThat(chain.lastRevision()).isEqualTo(50);
    }
}

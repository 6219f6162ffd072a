package io.watchfanout.ingester.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.ResponseHeader;
import io.etcd.jetcd.api.WatchResponse;
import io.etcd.jetcd.watch.WatchEvent;
import java.util.List;
import org.junit.jupiter.api.Test;

class EtcdEventsTest {
    private static final KeyValue CURRENT = KeyValue.newBuilder()
            .setKey(ByteString.copyFromUtf8("/registry/pods/default/web-0"))
            .setCreateRevision(7)
            .setModRevision(12)
            .setVersion(3)
            .setValue(ByteString.copyFromUtf8("{\"kind\":\"Pod\"}"))
            .setLease(42)
            .build();
    private static final KeyValue PREVIOUS =
            CURRENT.toBuilder().setModRevision(9).setVersion(2).build();

    private static WatchResponse response(Event... events) {
        return WatchResponse.newBuilder()
                .setHeader(ResponseHeader.newBuilder().setRevision(12))
                .addAllEvents(List.of(events))
                .build();
    }

    @Test
    void etcdsOwnMessageConvertsAsJetcdsEvents() {
        WatchResponse raw = response(
                Event.newBuilder()
                        .setType(Event.EventType.PUT)
                        .setKv(CURRENT)
                        .setPrevKv(PREVIOUS)
                        .build(),
                Event.newBuilder()
                        .setType(Event.EventType.PUT)
                        .setKv(CURRENT.toBuilder().setVersion(1))
                        .build(),
                Event.newBuilder()
                        .setType(Event.EventType.DELETE)
                        .setKv(KeyValue.newBuilder().setKey(CURRENT.getKey()).setModRevision(13))
                        .setPrevKv(CURRENT)
                        .build());
        io.etcd.jetcd.watch.WatchResponse jetcd = new io.etcd.jetcd.watch.WatchResponse(raw);

        assertThat(JetcdInternals.raw(jetcd)).isSameAs(raw);
        for (int i = 0; i < raw.getEventsCount(); i++) {
            WatchEvent viaJetcd = jetcd.getEvents().get(i);
            assertThat(EtcdEvents.toEvent(raw.getEvents(i))).isEqualTo(EtcdEvents.toEvent(viaJetcd));
        }
        io.watchfanout.schema.v1.Event put = EtcdEvents.toEvent(raw.getEvents(0));
        assertThat(put.getRevision()).isEqualTo(12);
        assertThat(put.getPrevKv().getModRevision()).isEqualTo(9);
        assertThat(put.getKv().getValue()).isSameAs(CURRENT.getValue());
        assertThat(EtcdEvents.toEvent(raw.getEvents(1)).hasPrevKv()).isFalse();
        assertThat(EtcdEvents.toEvent(raw.getEvents(2)).getType())
                .isEqualTo(io.watchfanout.schema.v1.Event.Type.DELETE);
    }
}

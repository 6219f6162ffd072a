package io.watchfanout.fanout.frame;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.Event;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class FrameEncoderTest {
    private final FrameEncoder encoder = new FrameEncoder();
    private final EtcdLog etcd = new EtcdLog(10);

    private Event only(List<EventsRecord> records) {
        return records.get(0).getEvent();
    }

    @Test
    void mapsEtcdEventsAsTheReadmeSays() {
        Event added = only(etcd.put("a", "1"));
        Event modified = only(etcd.put("a", "2"));
        Event deleted = only(etcd.delete("a"));
        assertThat(WatchEventEncodings.toWatchEvent(added, 11).getType()).isEqualTo(WatchEvent.Type.ADDED);
        assertThat(WatchEventEncodings.toWatchEvent(modified, 12).getType()).isEqualTo(WatchEvent.Type.MODIFIED);
        WatchEvent del = WatchEventEncodings.toWatchEvent(deleted, 13);
        assertThat(del.getType()).isEqualTo(WatchEvent.Type.DELETED);
        assertThat(del.getObject())
                .as("DELETED carries the previous key-value unchanged")
                .isEqualTo(modified.getKv());
        assertThat(del.getResourceVersion()).isEqualTo(13);
        assertThat(del.getCount()).isEqualTo(1);
    }

    @Test
    void protobufFramesAreWriteDelimitedToFormat() throws Exception {
        Event e = only(etcd.put("k", "v"));
        WatchEvent expected = WatchEventEncodings.toWatchEvent(e, e.getRevision());
        ByteBuffer frame = encoder.event(new CachedEvent(e, 0), WatchEventEncodings.PROTOBUF, FrameKind.EVENT);
        ByteArrayOutputStream ref = new ByteArrayOutputStream();
        expected.writeDelimitedTo(ref);
        byte[] ours = new byte[frame.remaining()];
        frame.duplicate().get(ours);
        assertThat(ours).isEqualTo(ref.toByteArray());
        assertThat(frame.isReadOnly()).isTrue();
        assertThat(frame.isDirect()).isTrue();
        assertThat(Frames.decode(frame, false)).isEqualTo(expected);
    }

    @Test
    void jsonFramesAreOneLineEach() {
        Event e = only(etcd.put("k", "v"));
        ByteBuffer frame = encoder.event(new CachedEvent(e, 0), WatchEventEncodings.JSON, FrameKind.EVENT);
        byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        String s = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        assertThat(s).endsWith("\n").doesNotContain("\n\n");
        assertThat(s.indexOf('\n')).isEqualTo(s.length() - 1);
        assertThat(Frames.decode(frame, true)).isEqualTo(WatchEventEncodings.toWatchEvent(e, e.getRevision()));
    }

    @Test
    void cachedEventEncodesOncePerEncodingEvenUnderConcurrentFirstUse() throws Exception {
        List<CachedEvent> events = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            events.add(new CachedEvent(only(etcd.put("k" + i, "v")), 0));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<List<ByteBuffer>>> results = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            Encoding enc = (t % 2 == 0 ? WatchEventEncodings.JSON : WatchEventEncodings.PROTOBUF);
            results.add(pool.submit(() -> {
                go.await();
                List<ByteBuffer> got = new ArrayList<>();
                for (CachedEvent e : events) {
                    got.add(e.frame(enc, encoder));
                }
                return got;
            }));
        }
        go.countDown();
        List<List<ByteBuffer>> all = new ArrayList<>();
        for (Future<List<ByteBuffer>> f : results) {
            all.add(f.get(10, TimeUnit.SECONDS));
        }
        pool.shutdown();
        assertThat(encoder.encodes(WatchEventEncodings.JSON, FrameKind.EVENT)).isEqualTo(50);
        assertThat(encoder.encodes(WatchEventEncodings.PROTOBUF, FrameKind.EVENT))
                .isEqualTo(50);
        for (int i = 0; i < 50; i++) {
            assertThat(all.get(2).get(i))
                    .as("same buffer instance for every caller")
                    .isSameAs(all.get(0).get(i));
        }
    }

    @Test
    void releasedEventsStopMemoizing() {
        CachedEvent e = new CachedEvent(only(etcd.put("k", "v")), 0);
        ByteBuffer first = e.frame(WatchEventEncodings.JSON, encoder);
        assertThat(e.frame(WatchEventEncodings.JSON, encoder)).isSameAs(first);
        e.release();
        e.frame(WatchEventEncodings.JSON, encoder);
        e.frame(WatchEventEncodings.JSON, encoder);
        assertThat(encoder.encodes(WatchEventEncodings.JSON, FrameKind.EVENT)).isEqualTo(3);
    }

    @Test
    void bookmarksAreSharedPerRevisionAndEncoding() {
        ByteBuffer a = encoder.bookmark(100, WatchEventEncodings.JSON);
        assertThat(encoder.bookmark(100, WatchEventEncodings.JSON)).isSameAs(a);
        assertThat(Frames.decode(a, true))
                .isEqualTo(WatchEvent.newBuilder()
                        .setType(WatchEvent.Type.BOOKMARK)
                        .setResourceVersion(100)
                        .build());
        encoder.bookmark(100, WatchEventEncodings.PROTOBUF);
        encoder.bookmark(101, WatchEventEncodings.JSON);
        encoder.bookmark(101, WatchEventEncodings.JSON);
        encoder.bookmark(100, WatchEventEncodings.JSON); // older than the memo: built unshared
        assertThat(encoder.encodes(WatchEventEncodings.JSON, FrameKind.BOOKMARK))
                .isEqualTo(3);
        assertThat(encoder.encodes(WatchEventEncodings.PROTOBUF, FrameKind.BOOKMARK))
                .isEqualTo(1);
    }

    @Test
    void initialFramesAreAddedWithTheKeysModRevisionAndOnlyForPuts() {
        Event put = only(etcd.put("k", "v"));
        put = only(etcd.put("k", "v2"));
        CachedEvent e = new CachedEvent(put, 0);
        WatchEvent initial = Frames.decode(e.initialFrame(WatchEventEncodings.JSON, encoder), true);
        assertThat(initial.getType()).isEqualTo(WatchEvent.Type.ADDED);
        assertThat(initial.getObject()).isEqualTo(put.getKv());
        assertThat(initial.getResourceVersion()).isEqualTo(put.getKv().getModRevision());
        assertThat(e.initialFrame(WatchEventEncodings.JSON, encoder))
                .isSameAs(e.initialFrame(WatchEventEncodings.JSON, encoder));
        CachedEvent del = new CachedEvent(only(etcd.delete("k")), 0);
        assertThatThrownBy(() -> del.initialFrame(WatchEventEncodings.JSON, encoder))
                .isInstanceOf(IllegalStateException.class);
        assertThat(Frames.decode(
                                encoder.initialEvent(
                                        KeyValue.getDefaultInstance(), null, null, WatchEventEncodings.PROTOBUF),
                                false)
                        .getType())
                .isEqualTo(WatchEvent.Type.ADDED);
    }

    private static String text(ByteBuffer frame) {
        byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void sseFramesAreIdEventAndTheJsonFrameAsData() {
        List<EventsRecord> txn = etcd.txn(EtcdLog.Op.put("a", "1"), EtcdLog.Op.put("b", "2"));
        CachedEvent first = new CachedEvent(txn.get(0).getEvent(), 0);
        String json = text(first.frame(WatchEventEncodings.JSON, encoder));
        String sse = text(first.frame(WatchEventEncodings.SSE, encoder));
        assertThat(sse).isEqualTo("id: 11\nevent: ADDED\ndata: " + json.substring(0, json.length() - 1) + "\n\n");
        assertThat(Frames.parseSseFrame(first.frame(WatchEventEncodings.SSE, encoder))
                        .frame())
                .isEqualTo(WatchEventEncodings.toWatchEvent(txn.get(0).getEvent(), 11));
        // Inside a revision: the same bytes without the id line, a view, not a second encode.
        ByteBuffer inside = first.frameInRevision(WatchEventEncodings.SSE, encoder);
        assertThat(text(inside)).isEqualTo(sse.substring(sse.indexOf('\n') + 1));
        assertThat(inside.isReadOnly()).isTrue();
        assertThat(inside.isDirect()).isTrue();
        assertThat(first.frameInRevision(WatchEventEncodings.SSE, encoder)).isSameAs(inside);
        assertThat(first.frameInRevision(WatchEventEncodings.JSON, encoder))
                .isSameAs(first.frame(WatchEventEncodings.JSON, encoder));
        assertThat(encoder.encodes(WatchEventEncodings.SSE, FrameKind.EVENT)).isEqualTo(1);
        // Bookmarks carry an id; initial events and errors none.
        assertThat(text(encoder.bookmark(12, WatchEventEncodings.SSE))).startsWith("id: 12\nevent: BOOKMARK\ndata: {");
        assertThat(text(first.initialFrame(WatchEventEncodings.SSE, encoder))).startsWith("event: ADDED\ndata: {");
        assertThat(text(encoder.error(io.watchfanout.fanout.watch.Statuses.expired("gone"), WatchEventEncodings.SSE)))
                .startsWith("event: ERROR\ndata: {")
                .endsWith("}\n\n");
        // Without a memoized JSON frame the SSE frame is the same.
        CachedEvent fresh = new CachedEvent(txn.get(0).getEvent(), 0);
        assertThat(text(fresh.frame(WatchEventEncodings.SSE, encoder))).isEqualTo(sse);
    }

    @Test
    void memoizedFramesAreCountedUntilTheirEventIsReleased() {
        CachedEvent a = new CachedEvent(only(etcd.put("a", "1")), 0);
        CachedEvent b = new CachedEvent(only(etcd.put("b", "1")), 0);
        ByteBuffer aJson = a.frame(WatchEventEncodings.JSON, encoder);
        a.frame(WatchEventEncodings.SSE, encoder);
        a.frameInRevision(WatchEventEncodings.SSE, encoder);
        ByteBuffer bProto = b.frame(WatchEventEncodings.PROTOBUF, encoder);
        encoder.bookmark(20, WatchEventEncodings.JSON);
        assertThat(encoder.memoizedFrames())
                .as("event frames, not views or bookmarks")
                .isEqualTo(3);
        long aBytes = encoder.memoizedBytes() - bProto.capacity();
        assertThat(aBytes).isGreaterThan(aJson.capacity());
        a.release();
        assertThat(encoder.memoizedFrames()).isEqualTo(1);
        assertThat(encoder.memoizedBytes()).isEqualTo(bProto.capacity());
        a.frame(WatchEventEncodings.JSON, encoder);
        assertThat(encoder.memoizedFrames())
                .as("a released event no longer memoizes")
                .isEqualTo(1);
        b.release();
        assertThat(encoder.memoizedFrames()).isZero();
        assertThat(encoder.memoizedBytes()).isZero();
    }
}

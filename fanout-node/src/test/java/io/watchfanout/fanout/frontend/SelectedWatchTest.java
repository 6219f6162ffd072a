package io.watchfanout.fanout.frontend;

import static io.watchfanout.fanout.testing.EtcdLog.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.AttributeExtractor;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.fanout.testing.RecordFeed;
import io.watchfanout.fanout.watch.CoreSettings;
import io.watchfanout.fanout.watch.Watch;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.fanout.watch.WatchSelector;
import io.watchfanout.fanout.watch.WatchSpec;
import io.watchfanout.schema.v1.EventsRecord;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.WatchEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Selectors and indexed dispatch through the core's public surface, as a front end uses them: an
 * extractor reads each stored object once per event ("node=n1,app=web" values here), watchers
 * select by those attributes and register under an index value. An event visits only the
 * watchers of the values its object carries (counted), an object moving out of a watcher's
 * selection arrives as DELETED and one moving in as ADDED, each such frame encoded once.
 */
class SelectedWatchTest {
    /** Index 0: the object's node. */
    private static final int NODE = 0;

    private final EtcdLog etcd = new EtcdLog(100);
    private WatchCore core;
    private RecordFeed applier;
    private final List<Watch> opened = new ArrayList<>();

    /** The attributes of a value "k=v,k=v". */
    private record Attrs(Map<String, String> fields) implements ObjectAttributes {
        @Override
        public String indexValue(int index) {
            return index == NODE ? fields.get("node") : null;
        }
    }

    private static final class FieldsExtractor implements AttributeExtractor {
        int calls;

        @Override
        public ObjectAttributes extract(KeyValue kv) {
            calls++;
            Map<String, String> fields = new HashMap<>();
            for (String pair : kv.getValue().toString(StandardCharsets.UTF_8).split(",")) {
                String[] kvp = pair.split("=", 2);
                if (kvp.length == 2) {
                    fields.put(kvp[0], kvp[1]);
                }
            }
            return new Attrs(fields);
        }

        @Override
        public int indexCount() {
            return 1;
        }
    }

    private final FieldsExtractor extractor = new FieldsExtractor();

    @BeforeEach
    void start() {
        core = new WatchCore(CoreSettings.of(1000, Duration.ofMinutes(10), 64, "selected"), new FrameEncoder());
        core.useAttributes(extractor);
        core.feed().startAt(100);
        core.feed().markReady();
        applier = new RecordFeed(core.feed(), 100);
    }

    @AfterEach
    void stop() {
        opened.forEach(Watch::close);
        core.close();
    }

    private void feed(List<EventsRecord> records) {
        records.forEach(applier::accept);
    }

    private static WatchSelector field(String name, String value) {
        return a -> a != null && value.equals(((Attrs) a).fields().get(name));
    }

    private Watch open(WatchSpec spec) throws Exception {
        Watch w = core.watch(spec, () -> {});
        opened.add(w);
        return w;
    }

    private Watch onNode(String node) throws Exception {
        return open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .selector(field("node", node))
                .indexed(NODE, node)
                .build());
    }

    private static List<WatchEvent> poll(Watch w) {
        List<ByteBuffer> out = new ArrayList<>();
        w.poll(out, 100);
        List<WatchEvent> events = new ArrayList<>();
        for (ByteBuffer f : out) {
            events.add(Frames.decode(f, true));
        }
        return events;
    }

    @Test
    void anEventVisitsOnlyTheWatchersOfItsIndexValue() throws Exception {
        List<Watch> nodes = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            nodes.add(onNode("n" + i));
        }
        nodes.forEach(SelectedWatchTest::poll);
        long visits = core.status().valueIndexVisits();

        feed(etcd.put("/pods/a", "node=n5,app=web"));

        assertThat(core.status().valueIndexVisits() - visits)
                .as("one bucket, one watcher, out of 100")
                .isEqualTo(1);
        for (int i = 0; i < 100; i++) {
            List<WatchEvent> got = poll(nodes.get(i));
            if (i == 5) {
                assertThat(got).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.ADDED);
            } else {
                assertThat(got).as("watcher of n" + i).isEmpty();
            }
        }
        assertThat(extractor.calls)
                .as("the new object's attributes, once for 100 watchers")
                .isEqualTo(1);
    }

    @Test
    void aMoveBetweenIndexValuesIsDeletedForOneWatcherAndAddedForTheOther() throws Exception {
        Watch n5 = onNode("n5");
        Watch n7 = onNode("n7");
        Watch n9 = onNode("n9");
        feed(etcd.put("/pods/a", "node=n5"));
        assertThat(poll(n5)).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.ADDED);
        long visits = core.status().valueIndexVisits();

        feed(etcd.put("/pods/a", "node=n7"));

        assertThat(core.status().valueIndexVisits() - visits)
                .as("the buckets of n7 and n5")
                .isEqualTo(2);
        List<WatchEvent> left = poll(n5);
        assertThat(left).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.DELETED);
        assertThat(left.get(0).getObject().getValue().toStringUtf8())
                .as("DELETED carries the object as it was, which the watcher last saw")
                .isEqualTo("node=n5");
        assertThat(left.get(0).getResourceVersion())
                .as("at the event's revision")
                .isEqualTo(etcd.revision());
        List<WatchEvent> entered = poll(n7);
        assertThat(entered).extracting(WatchEvent::getType).containsExactly(WatchEvent.Type.ADDED);
        assertThat(entered.get(0).getObject().getValue().toStringUtf8()).isEqualTo("node=n7");
        assertThat(poll(n9)).isEmpty();
    }

    @Test
    void aModifiedLeavingTheSelectorArrivesAsDeletedEncodedOnce() throws Exception {
        List<Watch> web = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            web.add(open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                    .selector(field("app", "web"))
                    .build()));
        }
        Watch all = open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .build());
        feed(etcd.put("/pods/a", "app=web"));
        feed(etcd.put("/pods/a", "app=db"));
        feed(etcd.put("/pods/a", "app=db,x=1"));
        feed(etcd.put("/pods/a", "app=web"));
        feed(etcd.delete("/pods/a"));

        for (Watch w : web) {
            assertThat(poll(w))
                    .extracting(WatchEvent::getType)
                    .containsExactly(
                            WatchEvent.Type.ADDED, // created matching
                            WatchEvent.Type.DELETED, // left the selection
                            WatchEvent.Type.ADDED, // came back
                            WatchEvent.Type.DELETED); // deleted while matching
        }
        assertThat(poll(all))
                .extracting(WatchEvent::getType)
                .containsExactly(
                        WatchEvent.Type.ADDED,
                        WatchEvent.Type.MODIFIED,
                        WatchEvent.Type.MODIFIED,
                        WatchEvent.Type.MODIFIED,
                        WatchEvent.Type.DELETED);
        FrameEncoder enc = core.frameEncoder();
        assertThat(enc.encodes(WatchEventEncodings.JSON, FrameKind.LEFT))
                .as("for 10 watchers")
                .isEqualTo(1);
        assertThat(enc.encodes(WatchEventEncodings.JSON, FrameKind.ENTERED)).isEqualTo(1);
    }

    @Test
    void initialEventsAndCatchUpFromTheWindowAreSelectedToo() throws Exception {
        feed(etcd.put("/pods/a", "app=web"));
        feed(etcd.put("/pods/b", "app=db"));
        long afterTwo = etcd.revision();
        feed(etcd.put("/pods/b", "app=web"));
        feed(etcd.put("/pods/a", "app=db"));

        Watch initial = open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .initialEvents(true)
                .selector(field("app", "web"))
                .build());
        List<WatchEvent> got = poll(initial);
        assertThat(got)
                .extracting(WatchEvent::getType)
                .containsExactly(WatchEvent.Type.ADDED, WatchEvent.Type.BOOKMARK);
        assertThat(got.get(0).getObject().getKey().toStringUtf8()).isEqualTo("/pods/b");

        Watch resumed = open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .from(afterTwo)
                .selector(field("app", "web"))
                .build());
        List<WatchEvent> caught = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            caught.addAll(poll(resumed));
        }
        assertThat(caught)
                .extracting(WatchEvent::getType)
                .containsExactly(WatchEvent.Type.ADDED, WatchEvent.Type.DELETED);
        assertThat(caught)
                .extracting(e -> e.getObject().getKey().toStringUtf8())
                .containsExactly("/pods/b", "/pods/a");
    }

    private Watch unselected() throws Exception {
        return open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .build());
    }

    private Watch selectingWeb(long from) throws Exception {
        return open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .from(from)
                .selector(field("app", "web"))
                .build());
    }

    @Test
    void theExtractorRunsOnlyWhileAWatcherReadsAttributesOncePerEventAndValue() throws Exception {
        List<Watch> plain = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            plain.add(unselected());
        }
        feed(etcd.put("/pods/a", "app=web"));
        feed(etcd.put("/pods/a", "app=db"));
        Watch initial = open(WatchSpec.of(KeyRange.prefix(key("/pods/")), WatchEventEncodings.JSON)
                .initialEvents(true)
                .build());
        for (Watch w : plain) {
            assertThat(poll(w)).hasSize(2);
        }
        assertThat(poll(initial)).extracting(WatchEvent::getType).contains(WatchEvent.Type.ADDED);
        assertThat(extractor.calls)
                .as("11 watchers, none selecting or indexed: no object is read")
                .isZero();

        Watch selected = selectingWeb(0);
        feed(etcd.put("/pods/b", "app=web")); // one value
        feed(etcd.put("/pods/b", "app=db")); // the new value and the previous one
        feed(etcd.delete("/pods/b")); // the previous value only
        for (Watch w : plain) {
            assertThat(poll(w)).hasSize(3);
        }
        assertThat(poll(selected))
                .extracting(WatchEvent::getType)
                .containsExactly(WatchEvent.Type.ADDED, WatchEvent.Type.DELETED);
        assertThat(extractor.calls)
                .as("once per event and value with one selecting watcher among 11")
                .isEqualTo(4);

        selected.close();
        feed(etcd.put("/pods/c", "app=web"));
        for (Watch w : plain) {
            assertThat(poll(w)).hasSize(1);
        }
        assertThat(extractor.calls).as("not again once it closed").isEqualTo(4);
    }

    @Test
    void aSelectingWatcherArrivingLaterReadsTheAttributesOfWhatItCatchesUpOn() throws Exception {
        Watch plain = unselected();
        long from = etcd.revision();
        feed(etcd.put("/pods/a", "app=web"));
        feed(etcd.put("/pods/b", "app=db"));
        feed(etcd.put("/pods/a", "app=db"));
        assertThat(poll(plain)).hasSize(3);
        assertThat(extractor.calls).isZero();

        for (int round = 0; round < 2; round++) {
            Watch late = selectingWeb(from);
            List<WatchEvent> caught = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                caught.addAll(poll(late));
            }
            assertThat(caught)
                    .extracting(WatchEvent::getType)
                    .containsExactly(WatchEvent.Type.ADDED, WatchEvent.Type.DELETED);
            assertThat(caught)
                    .extracting(e -> e.getObject().getValue().toStringUtf8())
                    .as("DELETED carries the object it last saw")
                    .containsExactly("app=web", "app=web");
        }
        assertThat(extractor.calls)
                .as("each of the three events' values once (1 + 1 + 2), for two late watchers")
                .isEqualTo(4);
    }
}

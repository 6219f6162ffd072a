package io.watchfanout.fanout.kube;

import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.frame.FrameFormat;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.frame.ObjectAttributes;
import io.watchfanout.kube.codec.KubeListWriter;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.Status;
import java.nio.ByteBuffer;

/**
 * List items memoized on the event that wrote the object, as its watch frames are: the codec's
 * {@link KubeListWriter#renderItem} in each of its forms, registered as the core's encodings
 * {@code kube-json-item}, {@code kube-protobuf-item}, and the metadata-only
 * {@code kube-metadata-json-item} and {@code kube-metadata-protobuf-item}. Rendered once per event, shared by every
 * list while the event is in the history window; an object not renderable memoizes nothing (an
 * empty buffer), and the list renders it again to report why.
 *
 * <p>Thread-safe: the formats are stateless, and the core's memo is.
 */
final class KubeListItems {
    static final Encoding JSON_ITEMS =
            Encoding.register("kube-json-item", "application/json", new ItemFormat(KubeListWriter.Form.JSON));

    static final Encoding PROTOBUF_ITEMS = Encoding.register(
            "kube-protobuf-item", "application/vnd.kubernetes.protobuf", new ItemFormat(KubeListWriter.Form.PROTOBUF));

    static final Encoding METADATA_JSON_ITEMS = Encoding.register(
            "kube-metadata-json-item", "application/json", new ItemFormat(KubeListWriter.Form.METADATA_JSON));

    static final Encoding METADATA_PROTOBUF_ITEMS = Encoding.register(
            "kube-metadata-protobuf-item",
            "application/vnd.kubernetes.protobuf",
            new ItemFormat(KubeListWriter.Form.METADATA_PROTOBUF));

    private KubeListItems() {}

    /**
     * Registers the encodings now (class initialization does), so that they are the core's
     * from the front end's start (metrics list every registered encoding), not from the first list.
     */
    static void register() {}

    /**
     * The list item of {@code kv}, opened if it is encrypted at rest.
     *
     * @param lastEvent the PUT that wrote {@code kv} while in the history window, else null: its
     *     memo then keeps the rendered item for every later list
     * @param encoder the core's frame encoder, through which items are memoized on their events;
     *     null renders every item
     */
    static KubeListWriter.Item item(KeyValue kv, CachedEvent lastEvent, FrameEncoder encoder) {
        if (lastEvent == null || encoder == null) {
            return KubeListWriter.Item.of(kv, null);
        }
        return KubeListWriter.Item.of(kv, form -> lastEvent.initialFrame(encoding(form), encoder));
    }

    private static Encoding encoding(KubeListWriter.Form form) {
        return switch (form) {
            case JSON -> JSON_ITEMS;
            case PROTOBUF -> PROTOBUF_ITEMS;
            case METADATA_JSON -> METADATA_JSON_ITEMS;
            case METADATA_PROTOBUF -> METADATA_PROTOBUF_ITEMS;
        };
    }

    /** Renders the memoized items (stateless; thread-safe). */
    private static final class ItemFormat implements FrameFormat {
        private final KubeListWriter.Form form;

        ItemFormat(KubeListWriter.Form form) {
            this.form = form;
        }

        @Override
        public ByteBuffer initial(KeyValue kv, ObjectAttributes attributes, CachedEvent lastEvent) {
            return KubeListWriter.renderItem(kv, form);
        }

        @Override
        public ByteBuffer event(CachedEvent event, FrameKind kind) {
            throw new UnsupportedOperationException("a list item is memoized as an initial frame only");
        }

        @Override
        public ByteBuffer bookmark(long revision, boolean initialEventsEnd) {
            throw new UnsupportedOperationException("a list item has no bookmark");
        }

        @Override
        public ByteBuffer error(Status status) {
            throw new UnsupportedOperationException("a list item has no error frame");
        }
    }
}

package io.watchfanout.fanout.kube;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import io.undertow.server.HttpServerExchange;
import io.watchfanout.common.KeyRange;
import io.watchfanout.fanout.frame.CachedEvent;
import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ReadMode;
import io.watchfanout.fanout.watch.HistoryExpiredException;
import io.watchfanout.fanout.watch.ListPage;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.kube.codec.AtRest;
import io.watchfanout.kube.codec.KubeListWriter;
import io.watchfanout.kube.codec.UndecodableObjectException;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.kube.codec.select.FieldSelector;
import io.watchfanout.kube.codec.select.LabelSelector;
import io.watchfanout.kube.codec.table.KubeTable;
import io.watchfanout.schema.v1.KeyValue;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Gets and lists of Kubernetes objects from the watch cache, as kube-apiserver answers them: the
 * revision from {@link KubeReadOptions} (waiting in {@link KubeRevisionWait}), pages of
 * {@code limit} objects all read at the first page's revision and chained by
 * continue tokens ({@link ContinueToken.Form#KUBERNETES}), label and field selectors decided from the stored bytes, and the
 * answer in JSON, protobuf, Table or the objects' metadata alone ({@link KubeFormat}). List items are written by
 * {@link KubeListWriter}, Table rows read from {@link KubeItems#jsonItem}. {@code metadata.resourceVersion} of an object is its key's mod
 * revision, that of a list the revision it was read at.
 *
 * <p>Runs on a worker thread (it may block in the wait and in writing). Thread-safe.
 */
final class KubeReads {
    /** kube-apiserver's message of a 410 for a continue token older than the history. */
    static final String CONTINUE_EXPIRED = "The provided continue parameter is too old to display a consistent list "
            + "result. You can start a new list without the continue parameter, or use the continue token in this "
            + "response to retrieve the remainder of the results. Continuing with the provided token results in an "
            + "inconsistent list - objects that were created, modified, or deleted between the time the first chunk "
            + "was returned and now may show up in the list.";
    /** kube-apiserver's message of a 410 for an exact resourceVersion older than the history. */
    static final String EXACT_EXPIRED = "The resourceVersion for the provided list is too old.";

    private final WatchCore core;
    private final KubeItems items;
    private final KubeListWriter lists;
    private final KubeRevisionWait wait;
    private final KubeStats stats;
    private final Clock clock;

    KubeReads(
            WatchCore core,
            KubeItems items,
            KubeListWriter lists,
            KubeRevisionWait wait,
            KubeStats stats,
            Clock clock) {
        this.core = core;
        this.items = items;
        this.lists = lists;
        this.wait = wait;
        this.stats = stats;
        this.clock = clock;
    }

    /** The etcd key range a read of {@code path} covers: one key, a namespace, or the whole resource. */
    static KeyRange range(KubePath path, KubeResources resources) {
        if (path.target() == KubePath.Target.OBJECT) {
            return KeyRange.single(utf8(objectKey(path, resources)));
        }
        return KeyRange.prefix(utf8(collectionPrefix(path, resources)));
    }

    /**
     * The etcd key range a list or watch of {@code path} with {@code fields} covers: as
     * {@link #range(KubePath, KubeResources)}, narrowed to the one key a {@code metadata.name=}
     * field selector names where the key is known (a cluster-scoped resource, or a namespace in the
     * path), as kube-apiserver's store narrows a list or watch that matches a single object
     * ({@code SelectionPredicate.MatchesSingle}). The other objects are then not read at all: one
     * that cannot be decoded neither fails the request nor is named in it (a kubelet's watch of
     * one Secret).
     */
    static KeyRange range(KubePath path, KubeResources resources, FieldSelector fields) {
        String name = path.target() == KubePath.Target.OBJECT ? null : fields.requiredValue("metadata.name");
        if (name == null || (path.resource().namespaced() && path.namespace().isEmpty())) {
            return range(path, resources);
        }
        return KeyRange.single(utf8(collectionPrefix(path, resources) + name));
    }

    private static String collectionPrefix(KubePath path, KubeResources resources) {
        return path.namespace().isEmpty()
                ? resources.keyPrefix(path.resource())
                : resources.keyPrefix(path.resource(), path.namespace());
    }

    private static String objectKey(KubePath path, KubeResources resources) {
        return collectionPrefix(path, resources) + path.name();
    }

    /**
     * Answers a get of one object.
     *
     * @throws KubeError 404 when there is none, 500 when it cannot be decoded, or the wait's refusals
     */
    void get(
            HttpServerExchange exchange,
            KubePath path,
            KubeResources resources,
            KubeFormat format,
            KubeFormat jsonFallback,
            KubeReadOptions options)
            throws KubeError, InterruptedException {
        awaitFor(options);
        String key = objectKey(path, resources);
        ListPage page;
        try {
            page = core.list(KeyRange.single(utf8(key)), null, 0, 1);
        } catch (HistoryExpiredException e) {
            throw new IllegalStateException("a read at the cache's revision expired", e);
        }
        if (page.kvs().isEmpty()) {
            throw KubeError.objectNotFound(path.resource(), path.name());
        }
        KeyValue kv = page.kvs().get(0);
        format = withoutProtobufFor(page.kvs(), format, jsonFallback);
        KubeResponse response;
        try {
            if (format == KubeFormat.TABLE) {
                KubeItems.Rendered item = items.jsonItem(kv);
                response = new KubeResponse(exchange, format.mediaType());
                response.unknownFields(item.unknownFields());
                byte[] table = KubeTable.list(
                        path.resource(), List.of(parse(item.bytes())), kv.getModRevision(), null, -1, clock.instant());
                response.write(table, 0, table.length);
            } else {
                KubeItems.Rendered object = items.object(kv, format);
                response = new KubeResponse(exchange, format.mediaType());
                response.unknownFields(object.unknownFields());
                response.write(object.bytes(), 0, object.bytes().length);
            }
        } catch (UndecodableObjectException e) {
            stats.undecodable.increment();
            throw KubeError.undecodable(key, e.getMessage());
        }
        stats.unknownFields.add(response.unknownFields());
        response.finish();
    }

    /**
     * Answers a list of a collection.
     *
     * @throws KubeError for bad options, an expired revision or token, an undecodable object, or
     *     the wait's refusals
     */
    void list(
            HttpServerExchange exchange,
            KubePath path,
            KubeResources resources,
            KubeFormat format,
            KubeFormat jsonFallback,
            KubeReadOptions options,
            LabelSelector labels,
            FieldSelector fields)
            throws KubeError, InterruptedException {
        String prefix = collectionPrefix(path, resources);
        KeyRange range = range(path, resources, fields);
        long at = 0;
        ByteString from = null;
        if (options.mode() == ReadMode.CONTINUE) {
            ContinueToken token = options.token();
            from = utf8(prefix + token.nextKey().toStringUtf8());
            at = token.revision() == ContinueToken.LATEST ? 0 : token.revision();
            wait.await(at);
        } else {
            awaitFor(options);
            if (options.mode() == ReadMode.EXACT) {
                at = options.resourceVersion();
            }
        }
        Page page;
        try {
            page = read(range, from, at, options, resources, labels, fields);
        } catch (HistoryExpiredException e) {
            if (options.mode() == ReadMode.CONTINUE) {
                throw KubeError.expired(
                        CONTINUE_EXPIRED,
                        new ContinueToken(ContinueToken.LATEST, options.token().nextKey(), -1)
                                .encode(ContinueToken.Form.KUBERNETES));
            }
            throw KubeError.expired(EXACT_EXPIRED, null);
        }
        format = withoutProtobufFor(page.kvs(), format, jsonFallback);
        StringBuilder why = new StringBuilder();
        int bad = items.firstUnreadable(page.kvs(), format, why);
        if (bad >= 0) {
            stats.undecodable.increment();
            throw KubeError.undecodable(page.kvs().get(bad).getKey().toStringUtf8(), why.toString());
        }
        String continueToken = page.next() == null
                ? null
                : new ContinueToken(
                                page.revision(),
                                utf8(page.next().toStringUtf8().substring(prefix.length())),
                                page.remaining())
                        .encode(ContinueToken.Form.KUBERNETES);
        write(exchange, path.resource(), format, page, continueToken);
    }

    /** One answered page: its objects, revision, next key (null on the last) and count after it (-1 unknown). */
    /** A page's objects and, for each, the PUT that wrote it while in the history window (else null). */
    private record Page(
            List<KeyValue> kvs, List<CachedEvent> lastEvents, long revision, ByteString next, long remaining) {}

    /**
     * Reads a page: one read of {@code limit} key-values without selectors; with selectors, reads
     * of {@code limit} key-values until {@code limit} objects matched or the range ended, the next
     * page starting after the last object examined (kube-apiserver pages a selected list so too,
     * without {@code remainingItemCount}).
     */
    private Page read(
            KeyRange range,
            ByteString from,
            long at,
            KubeReadOptions options,
            KubeResources resources,
            LabelSelector labels,
            FieldSelector fields)
            throws HistoryExpiredException, KubeError {
        int limit = (int) options.limit();
        boolean selecting = !labels.isEverything() || !fields.isEverything();
        boolean first = options.mode() != ReadMode.CONTINUE;
        if (!selecting) {
            ListPage page = core.list(range, from, at, limit == 0 ? Integer.MAX_VALUE : limit, limit > 0 && first);
            long remaining = -1;
            if (page.nextKey() != null) {
                if (first) {
                    remaining = page.remaining();
                } else {
                    remaining = options.token().remainingAfter(page.kvs().size());
                }
            }
            return new Page(page.kvs(), page.lastEvents(), page.revision(), page.nextKey(), remaining);
        }
        List<KeyValue> matched = new ArrayList<>();
        List<CachedEvent> matchedEvents = new ArrayList<>();
        ByteString cursor = from;
        long revision = at;
        while (true) {
            ListPage page = core.list(range, cursor, revision, limit == 0 ? Integer.MAX_VALUE : limit, false);
            revision = page.revision();
            List<KeyValue> kvs = page.kvs();
            for (int i = 0; i < kvs.size(); i++) {
                KeyValue kv = kvs.get(i);
                Optional<KubeResources.ObjectKey> key =
                        resources.parse(kv.getKey().toByteArray());
                if (key.isEmpty()) {
                    continue; // a key under the prefix that holds no object of the resource
                }
                boolean match;
                try {
                    match = items.matches(kv, key.get().namespace(), key.get().name(), labels, fields);
                } catch (UndecodableObjectException e) {
                    stats.undecodable.increment();
                    throw KubeError.undecodable(kv.getKey().toStringUtf8(), e.getMessage());
                }
                if (match) {
                    matched.add(kv);
                    matchedEvents.add(page.lastEvent(i));
                }
                if (limit > 0 && matched.size() == limit) {
                    boolean more = i < kvs.size() - 1 || page.nextKey() != null;
                    return new Page(
                            matched,
                            matchedEvents,
                            revision,
                            more ? kv.getKey().concat(ByteString.copyFrom(new byte[] {0})) : null,
                            -1);
                }
            }
            if (page.nextKey() == null) {
                return new Page(matched, matchedEvents, revision, null, -1);
            }
            cursor = page.nextKey();
        }
    }

    private void write(
            HttpServerExchange exchange, KubeResource resource, KubeFormat format, Page page, String continueToken)
            throws KubeError {
        KubeResponse response = new KubeResponse(exchange, format.mediaType());
        String[] rendering = new String[1];
        try {
            switch (format) {
                case TABLE -> {
                    List<JsonObject> objects = new ArrayList<>(page.kvs().size());
                    for (KeyValue kv : page.kvs()) {
                        rendering[0] = kv.getKey().toStringUtf8();
                        KubeItems.Rendered item = items.jsonItem(kv);
                        response.unknownFields(item.unknownFields());
                        objects.add(parse(item.bytes()));
                    }
                    byte[] table = KubeTable.list(
                            resource, objects, page.revision(), continueToken, page.remaining(), clock.instant());
                    response.write(table, 0, table.length);
                }
                case PROTOBUF ->
                    lists.protobuf(resource, items(page), page.revision(), continueToken, page.remaining(), response);
                case METADATA_JSON ->
                    lists.metadataJson(items(page), page.revision(), continueToken, page.remaining(), response);
                case METADATA_PROTOBUF ->
                    lists.metadataProtobuf(items(page), page.revision(), continueToken, page.remaining(), response);
                default ->
                    lists.json(resource, items(page), page.revision(), continueToken, page.remaining(), response);
            }
        } catch (UndecodableObjectException e) {
            stats.undecodable.increment();
            if (e.item() >= 0) {
                rendering[0] = page.kvs().get(e.item()).getKey().toStringUtf8();
            }
            if (response.committed()) {
                throw new BrokenResponseException("unable to decode an object from etcd key \"" + rendering[0]
                        + "\" after the list's first bytes were sent: " + e.getMessage());
            }
            throw KubeError.undecodable(rendering[0], e.getMessage());
        }
        stats.unknownFields.add(response.unknownFields());
        response.finish();
    }

    /**
     * The page's objects as list items, viewing the cache's bytes rather than copying them, each
     * memoized on the event that wrote it while that event is in the history window.
     */
    private List<KubeListWriter.Item> items(Page page) {
        List<KubeListWriter.Item> out = new ArrayList<>(page.kvs().size());
        for (int i = 0; i < page.kvs().size(); i++) {
            out.add(KubeListItems.item(
                    page.kvs().get(i),
                    i < page.lastEvents().size() ? page.lastEvents().get(i) : null,
                    core.frameEncoder()));
        }
        return out;
    }

    /** A failure after the answer's status was sent: the connection can only be closed. */
    static final class BrokenResponseException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BrokenResponseException(String message) {
            super(message);
        }
    }

    /**
     * {@code format}, or the client's next choice {@code jsonFallback} when it asked for protobuf
     * and an object is stored as JSON (a cluster run with {@code --storage-media-type=application/json}),
     * which has no protobuf form on this node; without a next choice the object is reported as
     * undecodable in protobuf.
     */
    private static KubeFormat withoutProtobufFor(List<KeyValue> kvs, KubeFormat format, KubeFormat jsonFallback) {
        if (!format.protobuf() || jsonFallback == null) {
            return format;
        }
        for (KeyValue kv : kvs) {
            if (AtRest.isEncrypted(kv.getValue())) {
                try {
                    if (!AtRest.open(kv).startsWith(PROTOBUF_MAGIC)) {
                        return jsonFallback;
                    }
                } catch (UndecodableObjectException e) {
                    // Reported when the item is rendered.
                }
            } else if (!kv.getValue().startsWith(PROTOBUF_MAGIC)) {
                return jsonFallback;
            }
        }
        return format;
    }

    private static final ByteString PROTOBUF_MAGIC = ByteString.copyFrom(new byte[] {'k', '8', 's', 0});

    private void awaitFor(KubeReadOptions options) throws KubeError, InterruptedException {
        switch (options.mode()) {
            case MOST_RECENT -> wait.awaitConsistent();
            case NOT_OLDER_THAN, EXACT -> wait.await(options.resourceVersion());
            default -> {}
        }
    }

    private static JsonObject parse(byte[] json) {
        return JsonParser.parseString(new String(json, StandardCharsets.UTF_8)).getAsJsonObject();
    }

    private static ByteString utf8(String s) {
        return ByteString.copyFrom(s, StandardCharsets.UTF_8);
    }
}

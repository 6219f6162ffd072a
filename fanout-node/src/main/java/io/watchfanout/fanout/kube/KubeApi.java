package io.watchfanout.fanout.kube;

import com.google.protobuf.ByteString;
import io.prometheus.client.CollectorRegistry;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.server.SSLSessionInfo;
import io.undertow.util.Headers;
import io.undertow.util.Methods;
import io.watchfanout.common.KeyRange;
import io.watchfanout.common.tls.PeerCertificates;
import io.watchfanout.fanout.kube.authz.KubernetesAuthorizer;
import io.watchfanout.fanout.kube.authz.NodeAuthorizer;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.security.AccessDeniedException;
import io.watchfanout.fanout.security.AuthenticationException;
import io.watchfanout.fanout.security.Credentials;
import io.watchfanout.fanout.security.EncryptionFile;
import io.watchfanout.fanout.security.FrontProxy;
import io.watchfanout.fanout.security.Identity;
import io.watchfanout.fanout.security.LimitExceededException;
import io.watchfanout.fanout.security.Listener;
import io.watchfanout.fanout.security.RequestAttributes;
import io.watchfanout.fanout.security.Verb;
import io.watchfanout.fanout.security.WatchAuthorization;
import io.watchfanout.fanout.security.WatchGrant;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpAccess;
import io.watchfanout.fanout.transport.HttpApi;
import io.watchfanout.fanout.transport.QueryParams;
import io.watchfanout.fanout.watch.CurrentRevision;
import io.watchfanout.fanout.watch.WatchCore;
import io.watchfanout.kube.codec.KubeListWriter;
import io.watchfanout.kube.codec.KubeSchema;
import io.watchfanout.kube.codec.ProtoJsonWriter;
import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import io.watchfanout.kube.codec.select.FieldSelector;
import io.watchfanout.kube.codec.select.LabelSelector;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.IoUtils;

/**
 * The Kubernetes API's reads on the node's HTTP port, for unchanged Kubernetes clients (kubectl,
 * client-go, fabric8, client-java): {@code /version}; discovery, aggregated ({@code apidiscovery.k8s.io/v2},
 * when {@code Accept} asks for it) or legacy ({@code /api}, {@code /apis}, {@code /api/v1},
 * {@code /apis/<group>/<version>}), custom resources included as the cache's CRDs come and go;
 * gets and lists of kube-apiserver's objects as they lie in etcd under the {@code --kube-prefix}
 * ({@link KubeReads}). {@code /openapi/v2} and {@code /openapi/v3} answer 404: the node has no
 * OpenAPI documents, and kubectl's reads do not need them.
 *
 * <p>The node is a read tier: every other method is a 405 {@code Status} saying so, and a watch
 * is not served yet (405). Unknown paths and resources are 404 in kube-apiserver's words; refusals
 * are {@code Status} objects with kube-apiserver's reasons; a node that is not serving answers
 * 503 with {@code Retry-After}. Access (README.md, "Security"): every request is authenticated
 * with the node's {@link AccessControl} (401; a client certificate's organizations are the user's
 * groups, as in kube-apiserver); with {@link #authorizeWith} ({@code --authorization-mode}) it is
 * authorized as kube-apiserver does ({@link KubeAuthorization}: RBAC, the Node authorizer),
 * otherwise as {@code /v1/kv}, a read of the etcd keys it covers: the one key, the namespace's or
 * the resource's prefix (403).
 *
 * <p>Mounted on the HTTP transport with {@link #mountOn}; requests are served on worker threads.
 * Thread-safe.
 */
public final class KubeApi implements HttpHandler {
    private static final Logger LOG = LoggerFactory.getLogger(KubeApi.class);
    /** The path prefixes the API takes on the HTTP port. */
    public static final List<String> PATH_PREFIXES = List.of("/api", "/apis", "/version", "/openapi");
    /** The audit name of Kubernetes reads. */
    static final String API = "kube-read";

    private final WatchCore core;
    private final KubeSettings settings;
    private final AccessControl access;
    private final KubeStats stats = new KubeStats();
    private final LiveResources live;
    private final KubeResources builtIn;
    private final KubeReads reads;
    private final KubeRevisionWait revisionWait;
    private final KubeAttributes attributes;
    /** Set by {@link #mountOn}. */
    private KubeWatches watches;
    /** The front proxy ({@code --requestheader-*}), or null. */
    private volatile FrontProxy frontProxy;
    /** Kubernetes authorization ({@code --authorization-mode}), or null for the node's policy over keys. */
    private volatile KubeAuthorization authorization;

    private final byte[] version;

    /**
     * The API over {@code core}.
     *
     * @param access who may read what; {@link AccessControl#open} for anyone
     * @param currentRevision where a consistent read learns etcd's revision, or null without an
     *     etcd endpoint (then such a read is answered at the node's revision)
     * @param registry where the {@code watchfanout_kube_*} counters are registered
     */
    public KubeApi(
            WatchCore core,
            KubeSettings settings,
            AccessControl access,
            CurrentRevision currentRevision,
            CollectorRegistry registry) {
        this.core = core;
        this.settings = settings;
        this.access = Objects.requireNonNull(access, "access");
        KubeSchema schema = KubeSchema.standard();
        ProtoJsonWriter writer = ProtoJsonWriter.create();
        KubeItems items = new KubeItems(schema, writer);
        this.builtIn = KubeResources.builtIn(settings.prefix());
        this.live = new LiveResources(core, builtIn, items, settings.nodeId());
        this.revisionWait = new KubeRevisionWait(core, settings, currentRevision);
        // Selectors and the spec.nodeName index of watches read each event's object once.
        this.attributes = new KubeAttributes(live, items, settings.prefix());
        core.useAttributes(attributes);
        KubeListItems.register();
        this.reads =
                new KubeReads(core, items, new KubeListWriter(schema, writer), revisionWait, stats, Clock.systemUTC());
        this.version = KubeDiscovery.version(
                Objects.requireNonNullElse(KubeApi.class.getPackage().getImplementationVersion(), "dev"));
        registry.register(stats);
    }

    /**
     * Authorizes with kube-apiserver's {@code --authorization-mode} from now on, instead of the
     * node's policy over etcd keys: {@code modes} in order (Node, RBAC, AlwaysAllow, AlwaysDeny)
     * over the RBAC objects and pods of {@code objects}, which this API keeps informed of their
     * changes and which decide the open watches again after each. Call before the node serves,
     * once; {@code objects} is closed by its owner.
     */
    public void authorizeWith(List<String> modes, KubeObjects objects) {
        KubernetesAuthorizer authorizer =
                new KubernetesAuthorizer(modes, objects::rbac, new NodeAuthorizer(objects.graph()));
        objects.onChange(access::recheckKubernetesWatches);
        attributes.tell(objects);
        core.observeRevisions(attributes::observe);
        objects.start();
        authorization = new KubeAuthorization(access, authorizer, objects::ensureRead);
    }

    /**
     * Takes the users a front proxy names in request headers ({@code --requestheader-*}) from now
     * on, as kube-apiserver's request-header authenticator, ahead of the node's other authenticators.
     */
    public void trustFrontProxy(FrontProxy proxy) {
        this.frontProxy = proxy;
    }

    /**
     * Opens values kube-apiserver encrypted at rest with the keys of {@code file}
     * ({@code --encryption-provider-config}) from now on, reading it again when it changes.
     *
     * @return stops the reloading of the file
     */
    public AutoCloseable decryptWith(EncryptionFile file) {
        return AtRestKeys.start(file, builtIn, settings.nodeId());
    }

    /**
     * Serves {@link #PATH_PREFIXES} on {@code http}, watches through its watch streams; call
     * before it starts, once.
     */
    public void mountOn(HttpApi http) {
        watches = new KubeWatches(core, http.watchStreams(), revisionWait, settings);
        for (String prefix : PATH_PREFIXES) {
            http.mount(prefix, this);
        }
    }

    @Override
    public void handleRequest(HttpServerExchange exchange) throws Exception {
        if (exchange.isInIoThread()) {
            exchange.dispatch(this);
            return;
        }
        stats.reads.increment();
        try {
            serve(exchange);
        } catch (KubeError e) {
            status(exchange, e);
        } catch (ApiException e) {
            status(
                    exchange,
                    KubeError.of(
                            e.status().getCode(),
                            e.status().getReason(),
                            e.status().getMessage()));
        } catch (KubeReads.BrokenResponseException | UncheckedIOException e) {
            LOG.warn(
                    "[node {}] {} {}: {}",
                    settings.nodeId(),
                    exchange.getRequestMethod(),
                    exchange.getRequestPath(),
                    e.getMessage());
            IoUtils.safeClose(exchange.getConnection());
        }
    }

    private void serve(HttpServerExchange exchange) throws KubeError, ApiException, InterruptedException {
        ApiException refused = exchange.getAttachment(HttpApi.REFUSED_REQUEST);
        if (refused != null) {
            throw refused; // a malformed target or path parameters: answered as a Status here
        }
        String path = decodePath(exchange.getRequestPath());
        boolean get = exchange.getRequestMethod().equals(Methods.GET)
                || exchange.getRequestMethod().equals(Methods.HEAD);
        if (exchange.getRequestMethod().equals(Methods.POST) && path != null && KubeReviews.isReview(path)) {
            review(exchange, path);
            return;
        }
        if (!get) {
            throw KubeError.of(
                    405,
                    "MethodNotAllowed",
                    exchange.getRequestMethod() + " is not allowed on " + path + ": this node is a read-only tier of "
                            + "the Kubernetes API (get, list, watch); send writes to kube-apiserver");
        }
        Identity identity = authenticate(exchange);
        if (path == null || path.equals("/openapi") || path.startsWith("/openapi/")) {
            throw KubeError.pathNotFound();
        }
        KubeAuthorization authz = authorization;
        QueryParams q = QueryParams.parse(exchange.getQueryString());
        String notServing = core.readiness().isDraining()
                ? "this node is shutting down; ask another node"
                : core.readiness().notServing();
        if (notServing != null) {
            throw KubeError.unavailable(notServing, settings.retryAfterSeconds());
        }
        LiveResources.Served served = live.current();
        Optional<KubePath> parsed = KubePath.parse(path, served.resources());
        if (parsed.isEmpty()) {
            throw KubeError.pathNotFound();
        }
        KubePath p = parsed.get();
        String accept = exchange.getRequestHeaders().getFirst(Headers.ACCEPT);
        if (authz != null && p.target() != KubePath.Target.OBJECT && p.target() != KubePath.Target.COLLECTION) {
            // Discovery and /version are non-resource paths, as kube-apiserver authorizes them.
            authz.nonResource(identity, path, API);
        }
        switch (p.target()) {
            case VERSION -> ok(exchange, KubeFormat.JSON.mediaType(), version);
            case CORE_GROUPS ->
                discovery(
                        exchange,
                        accept,
                        served.discovery().aggregatedCore(),
                        served.discovery().legacyCore());
            case GROUPS ->
                discovery(
                        exchange,
                        accept,
                        served.discovery().aggregatedGroups(),
                        served.discovery().legacyGroups());
            case RESOURCES -> {
                byte[] list = served.discovery().resourceList(p.apiVersion());
                if (list == null) {
                    throw KubeError.pathNotFound();
                }
                ok(exchange, KubeFormat.JSON.mediaType(), list);
            }
            default -> read(exchange, p, served.resources(), q, identity, accept, authz);
        }
    }

    /** Answers {@code kubectl auth can-i} and {@code whoami}: a question, not a write. */
    private void review(HttpServerExchange exchange, String path) throws KubeError {
        Identity identity = authenticate(exchange);
        exchange.startBlocking();
        byte[] body;
        try {
            body = exchange.getInputStream().readNBytes(KubeReviews.MAX_BODY + 1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (body.length > KubeReviews.MAX_BODY) {
            throw KubeError.of(
                    413, "RequestEntityTooLarge", "a review's body is at most " + KubeReviews.MAX_BODY + " bytes");
        }
        KubeAuthorization authz = authorization;
        byte[] answer = KubeReviews.answer(
                path, identity, body, authz != null ? authz::reviewReason : r -> policyDenial(identity, r));
        exchange.setStatusCode(201);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, KubeFormat.JSON.mediaType());
        exchange.getResponseSender().send(ByteBuffer.wrap(answer));
    }

    /**
     * Without {@code --authorization-mode}: whether the node's policy over etcd keys lets the
     * requester read what {@code r} names (discovery is served to every client the node authenticates).
     */
    private String policyDenial(Identity identity, RequestAttributes r) {
        if (!r.resourceRequest()) {
            return null;
        }
        KubeResources resources = live.current().resources();
        KubeResource resource = resources.all().stream()
                .filter(k -> k.group().equals(r.apiGroup()) && k.plural().equals(r.resource()))
                .findFirst()
                .orElse(null);
        if (resource == null) {
            return "this node does not serve " + r.resource() + (r.apiGroup().isEmpty() ? "" : "." + r.apiGroup());
        }
        String prefix = r.namespace().isEmpty() || !resource.namespaced()
                ? resources.keyPrefix(resource)
                : resources.keyPrefix(resource, r.namespace());
        KeyRange range = r.name().isEmpty()
                ? KeyRange.prefix(ByteString.copyFromUtf8(prefix))
                : KeyRange.single(ByteString.copyFromUtf8(prefix + r.name()));
        Verb verb = r.verb().equals("watch") ? Verb.WATCH : Verb.READ;
        return access.allows(identity, verb, range) ? null : identity + " may not " + verb.ruleName() + " " + range;
    }

    private void read(
            HttpServerExchange exchange,
            KubePath p,
            KubeResources resources,
            QueryParams q,
            Identity identity,
            String accept,
            KubeAuthorization authz)
            throws KubeError, InterruptedException {
        if (!p.subresource().isEmpty() && !p.subresource().equals("status")) {
            throw KubeError.subresourceNotServed(p.resource(), p.subresource());
        }
        // Built-in kinds have a protobuf form here; custom resources are JSON only.
        boolean protobufServed = builtIn.byPlural(
                        p.resource().group(),
                        p.resource().version(),
                        p.resource().plural())
                .isPresent();
        // The options once, as kube-apiserver's request scope reads them; what does not parse is answered in turn.
        KubeListOptions options = KubeListOptions.parse(q::text, p.resource());
        if (p.legacyWatch() || options.watch()) {
            String upgrade = exchange.getRequestHeaders().getFirst(Headers.UPGRADE);
            if (upgrade != null && upgrade.equalsIgnoreCase("websocket")) {
                // fabric8 tries a WebSocket watch first and falls back to a plain HTTP watch on a 503 (or 200)
                // with a body; the streams here are HTTP's, whose frames every watcher shares.
                throw KubeError.of(
                        503,
                        "ServiceUnavailable",
                        "this node serves watches as HTTP streams, not over WebSocket: watch without Upgrade");
            }
            // Kubernetes authorization first (a 403 before a 400), as kube-apiserver's filters run first.
            WatchAuthorization allowed = authz == null ? null : authz.watch(identity, p, options, API);
            KeyRange range =
                    KubeReads.range(p, resources, options.fieldSelector().get());
            KubeWatches.Admission admission;
            if (authz != null) {
                admission = () -> authz.admit(identity, range, allowed, API);
            } else {
                authorize(identity, Verb.WATCH, range);
                admission = () -> admitWatch(identity, range);
            }
            // A Table watch (kubectl get -w) is answered in the client's next choice, JSON.
            KubeFormat format = KubeFormat.negotiate(
                    accept, protobufServed, false, KubeFormat.Answer.of(p.resource(), protobufServed, false));
            if (format == null) {
                throw KubeError.of(406, "NotAcceptable", KubeFormat.ACCEPTED);
            }
            watches.watch(exchange, p, range, format, options, admission);
            return;
        }
        if (authz != null) {
            authz.read(identity, p, options, API);
        } else {
            authorize(
                    identity,
                    Verb.READ,
                    KubeReads.range(p, resources, options.fieldSelector().get()));
        }
        KubeFormat.Answer answer =
                KubeFormat.Answer.of(p.resource(), protobufServed, p.target() != KubePath.Target.OBJECT);
        KubeFormat format = KubeFormat.negotiate(accept, protobufServed, true, answer);
        if (format == null) {
            throw KubeError.of(406, "NotAcceptable", KubeFormat.ACCEPTED);
        }
        // For objects stored as JSON, which have no protobuf form here: the client's next choice.
        KubeFormat jsonFallback = KubeFormat.negotiate(accept, false, true, answer);
        if (p.target() == KubePath.Target.OBJECT) {
            reads.get(exchange, p, resources, format, jsonFallback, KubeReadOptions.get(options));
            return;
        }
        LabelSelector labels = options.labelSelector().get();
        FieldSelector fields = options.fieldSelector().get();
        reads.list(exchange, p, resources, format, jsonFallback, KubeReadOptions.list(options), labels, fields);
    }

    private static void discovery(HttpServerExchange exchange, String accept, byte[] aggregated, byte[] legacy) {
        if (accept != null
                && accept.contains("as=APIGroupDiscoveryList")
                && accept.contains("v=v2")
                && accept.contains("g=apidiscovery.k8s.io")) {
            ok(exchange, KubeDiscovery.AGGREGATED_MEDIA_TYPE, aggregated);
        } else {
            ok(exchange, KubeFormat.JSON.mediaType(), legacy);
        }
    }

    private WatchGrant admitWatch(Identity identity, KeyRange range) throws KubeError {
        try {
            return access.admitWatch(identity, range, API);
        } catch (AccessDeniedException e) {
            throw KubeError.of(403, "Forbidden", e.getMessage());
        } catch (LimitExceededException e) {
            throw KubeError.of(429, "TooManyRequests", e.getMessage());
        }
    }

    /**
     * What the request presented, as kube-apiserver's authenticators read it: the verified client
     * certificate's common name and organizations (the user's groups), and {@code Authorization}.
     */
    private static Credentials credentials(HttpServerExchange exchange) throws AuthenticationException {
        Credentials http = HttpAccess.credentials(exchange);
        List<X509Certificate> chain = HttpAccess.clientCertificates(exchange);
        if (chain.isEmpty() || http.certificateCommonName() == null) {
            return http;
        }
        return new Credentials(
                http.certificateCommonName(), http.authorization(), http.etcdToken(), organizations(chain.get(0)));
    }

    /** The user a front proxy names, with {@code system:authenticated}; or null when the request is not the proxy's. */
    private static Identity frontProxyUser(FrontProxy proxy, HttpServerExchange exchange)
            throws AuthenticationException {
        SSLSessionInfo tls = exchange.getConnection().getSslSessionInfo();
        List<X509Certificate> chain = tls == null ? List.of() : PeerCertificates.chain(tls.getSSLSession());
        Identity id = proxy.authenticate(chain, name -> {
            io.undertow.util.HeaderValues values = exchange.getRequestHeaders().get(name);
            return values == null ? List.of() : List.copyOf(values);
        });
        if (id == null) {
            return null;
        }
        Set<String> groups = new LinkedHashSet<>(id.groups());
        groups.add("system:authenticated");
        return new Identity(id.name(), groups, id.method());
    }

    /** The organizations ({@code O}) of a certificate's subject, kube-apiserver's groups of its user. */
    private static List<String> organizations(X509Certificate certificate) {
        List<String> out = new ArrayList<>();
        try {
            List<Rdn> rdns = new LdapName(certificate.getSubjectX500Principal().getName()).getRdns();
            // LdapName lists the RDNs from the right (least specific): the subject's order is the reverse.
            for (int i = rdns.size() - 1; i >= 0; i--) {
                if (rdns.get(i).getType().equalsIgnoreCase("O")) {
                    String o = String.valueOf(rdns.get(i).getValue());
                    if (!o.isEmpty()) {
                        out.add(o);
                    }
                }
            }
        } catch (InvalidNameException e) {
            // A subject the TLS layer accepted but LDAP syntax does not: no groups.
        }
        return out;
    }

    private Identity authenticate(HttpServerExchange exchange) throws KubeError {
        if (access.isOpen()) {
            return Identity.ANONYMOUS;
        }
        try {
            FrontProxy proxy = frontProxy;
            if (proxy != null) {
                Identity asserted = frontProxyUser(proxy, exchange);
                if (asserted != null) {
                    return asserted;
                }
            }
            return access.authenticate(Listener.HTTP, credentials(exchange), API);
        } catch (AuthenticationException e) {
            exchange.getResponseHeaders().put(Headers.WWW_AUTHENTICATE, HttpAccess.CHALLENGE);
            throw KubeError.of(401, "Unauthorized", e.getMessage());
        }
    }

    private void authorize(Identity identity, Verb verb, KeyRange range) throws KubeError {
        try {
            access.authorize(identity, verb, range, API);
        } catch (AccessDeniedException e) {
            throw KubeError.of(403, "Forbidden", e.getMessage());
        }
    }

    private void status(HttpServerExchange exchange, KubeError e) {
        if (exchange.isResponseStarted()) {
            IoUtils.safeClose(exchange.getConnection());
            return;
        }
        exchange.setStatusCode(e.code());
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
        if (e.retryAfterSeconds() > 0) {
            exchange.getResponseHeaders().put(Headers.RETRY_AFTER, Integer.toString(e.retryAfterSeconds()));
        }
        exchange.getResponseSender().send(ByteBuffer.wrap(e.statusJson()));
    }

    private static void ok(HttpServerExchange exchange, String contentType, byte[] body) {
        exchange.setStatusCode(200);
        exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
        exchange.getResponseSender().send(ByteBuffer.wrap(body));
    }

    /** The percent-decoded path (Undertow leaves it encoded on this node), or null when malformed. */
    static String decodePath(String raw) {
        if (raw.indexOf('%') < 0) {
            return raw;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length()) {
                    return null;
                }
                int hi = Character.digit(raw.charAt(i + 1), 16);
                int lo = Character.digit(raw.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}

package io.watchfanout.fanout.transport;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The origins whose pages may read this node's API across origins ({@code --cors-allowed-origins};
 * README.md, "Browsers"): none by default, a list of origins such as
 * {@code https://app.example.com} or {@code http://127.0.0.1:8080}, or {@code *} for any.
 *
 * <p>An origin is what a browser sends in its {@code Origin} header: {@code scheme://host} with
 * an optional {@code :port} and nothing after it. Browsers serialise it in lower case with the
 * default port left out, so configured origins are normalised the same way (lower case, a
 * trailing {@code /} dropped, {@code :80} of http and {@code :443} of https removed) and matched
 * exactly. {@code null}, the origin of sandboxed and {@code file:} pages, is refused as an entry:
 * every such page shares it, so allowing it would allow them all.
 *
 * <p>Immutable and thread-safe.
 */
public final class CorsOrigins {
    /** No origin is allowed: the default. */
    public static final CorsOrigins NONE = new CorsOrigins(Set.of(), false);

    private final Set<String> origins;
    private final boolean any;

    private CorsOrigins(Set<String> origins, boolean any) {
        this.origins = origins;
        this.any = any;
    }

    /**
     * Parses the flag's values (already split at commas; blanks around them are ignored).
     *
     * @param values origins, or {@code *}; empty (or only empty entries, as from an empty
     *     environment variable) for none
     * @throws IllegalArgumentException naming the flag, the value and what was expected, for an
     *     entry that is not an origin (a path, a query, no scheme or host, {@code null})
     */
    public static CorsOrigins of(List<String> values) {
        Set<String> out = new LinkedHashSet<>();
        boolean any = false;
        for (String raw : values) {
            String v = raw.trim();
            if (v.isEmpty()) {
                continue;
            }
            if (v.equals("*")) {
                any = true;
            } else {
                out.add(normalise(v));
            }
        }
        return out.isEmpty() && !any ? NONE : new CorsOrigins(Collections.unmodifiableSet(out), any);
    }

    private static String normalise(String v) {
        String problem = null;
        String origin = null;
        String s = v.endsWith("/") ? v.substring(0, v.length() - 1) : v;
        try {
            URI u = new URI(s);
            String scheme = u.getScheme() == null ? null : u.getScheme().toLowerCase(Locale.ROOT);
            if (scheme == null
                    || u.getHost() == null
                    || u.getRawUserInfo() != null
                    || !u.getRawPath().isEmpty()
                    || u.getRawQuery() != null
                    || u.getRawFragment() != null) {
                problem = "not an origin";
            } else {
                int port = u.getPort();
                boolean defaultPort =
                        port == -1 || (scheme.equals("http") && port == 80) || (scheme.equals("https") && port == 443);
                origin = scheme + "://" + u.getHost().toLowerCase(Locale.ROOT) + (defaultPort ? "" : ":" + port);
            }
        } catch (URISyntaxException e) {
            problem = "not an origin";
        }
        if (problem != null) {
            throw new IllegalArgumentException("--cors-allowed-origins: '" + v + "' (expected: origins such as "
                    + "https://app.example.com or http://127.0.0.1:8080, scheme://host[:port] without a path, "
                    + "comma-separated; or *)");
        }
        return origin;
    }

    /** Whether no origin is allowed. */
    public boolean isEmpty() {
        return !any && origins.isEmpty();
    }

    /** Whether a page of {@code origin} (an {@code Origin} header's value, exactly) may read the API. */
    public boolean allows(String origin) {
        return any || origins.contains(origin);
    }

    /** The flag's value in the node's log: {@code *}, the origins comma-separated, or {@code none}. */
    @Override
    public String toString() {
        if (any) {
            return "*";
        }
        return origins.isEmpty() ? "none" : String.join(",", origins);
    }
}

package io.watchfanout.common;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Parses one etcd client endpoint of {@code --etcd-endpoints} in the forms etcdctl takes:
 * {@code http://host:port}, {@code https://host:port}, or {@code host:port}, which means
 * {@code http://host:port} (etcdctl's {@code --endpoints 127.0.0.1:2379}); IPv6 hosts in
 * brackets ({@code [::1]:2379}). The result is always a URL with a scheme and a port, the form
 * jetcd needs; anything else is a {@link TypeConversionException} that picocli turns into a
 * usage error naming the flag.
 *
 * <p>Stateless and thread-safe.
 */
public final class EtcdEndpointConverter implements ITypeConverter<String> {
    private static final Pattern HAS_SCHEME = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://.*");

    @Override
    public String convert(String text) {
        return parse(text);
    }

    /**
     * @param text e.g. {@code 127.0.0.1:2379} or {@code http://etcd-0:2379}
     * @return the endpoint as a URL, e.g. {@code http://127.0.0.1:2379}
     * @throws TypeConversionException naming the value and the expected forms
     */
    public static String parse(String text) {
        String trimmed = text == null ? "" : text.trim();
        // Without a scheme, etcdctl assumes plain HTTP; so do we.
        String url = HAS_SCHEME.matcher(trimmed).matches() ? trimmed : "http://" + trimmed;
        try {
            URI uri = new URI(url);
            String scheme = uri.getScheme();
            boolean knownScheme = "http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme);
            boolean bare = uri.getUserInfo() == null
                    && uri.getQuery() == null
                    && uri.getFragment() == null
                    && (uri.getPath() == null
                            || uri.getPath().isEmpty()
                            || uri.getPath().equals("/"));
            if (knownScheme && uri.getHost() != null && uri.getPort() >= 1 && uri.getPort() <= 65535 && bare) {
                return scheme.toLowerCase(Locale.ROOT) + "://" + uri.getHost() + ":" + uri.getPort();
            }
        } catch (URISyntaxException e) {
            // falls through to the message below
        }
        throw new TypeConversionException("'" + text + "' is not an etcd endpoint (expected: host:port, "
                + "http://host:port or https://host:port, as etcdctl --endpoints takes them, e.g. 127.0.0.1:2379)");
    }
}

package io.watchfanout.fanout.v1;

import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.WatchEventEncodings;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.HttpStatuses;
import java.util.Locale;

/** Chooses the {@link Encoding} from an {@code Accept} header (RFC 9110 media ranges with q). */
final class AcceptHeader {
    private AcceptHeader() {}

    /**
     * @param accept the header, or null
     * @param allowEventStream whether {@code text/event-stream} is offered (watch streams only)
     * @return JSON when absent or for {@code *}{@code /*} / {@code application/*}; otherwise the
     *     acceptable supported type with the highest q (ties: the first listed)
     * @throws ApiException 406 when no supported type is acceptable
     */
    static Encoding negotiate(String accept, boolean allowEventStream) throws ApiException {
        if (accept == null || accept.isBlank()) {
            return WatchEventEncodings.JSON;
        }
        Encoding best = null;
        double bestQ = 0;
        for (String range : accept.split(",")) {
            String[] parts = range.split(";");
            String type = parts[0].trim().toLowerCase(Locale.ROOT);
            double q = 1;
            for (int i = 1; i < parts.length; i++) {
                String p = parts[i].trim();
                if (p.startsWith("q=") || p.startsWith("Q=")) {
                    try {
                        q = Double.parseDouble(p.substring(2));
                    } catch (NumberFormatException e) {
                        q = 0;
                    }
                }
            }
            Encoding e;
            switch (type) {
                case "application/json":
                case "application/*":
                case "*/*":
                    e = WatchEventEncodings.JSON;
                    break;
                case "application/x-protobuf":
                    e = WatchEventEncodings.PROTOBUF;
                    break;
                case "text/event-stream":
                    e = allowEventStream ? WatchEventEncodings.SSE : null;
                    break;
                default:
                    e = null;
            }
            if (e != null && q > bestQ) {
                best = e;
                bestQ = q;
            }
        }
        if (best == null) {
            throw new ApiException(HttpStatuses.notAcceptable("Accept: \"" + accept + "\" (expected: "
                    + (allowEventStream
                            ? "application/json, application/x-protobuf or text/event-stream"
                            : "application/json or application/x-protobuf")
                    + ")"));
        }
        return best;
    }
}

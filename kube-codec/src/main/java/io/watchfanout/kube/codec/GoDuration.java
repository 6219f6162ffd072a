package io.watchfanout.kube.codec;

/**
 * Formats nanoseconds as Go's {@code time.Duration.String()} does ({@code "1h2m3.5s"},
 * {@code "1.5ms"}, {@code "0s"}): the JSON form of {@code metav1.Duration}.
 */
final class GoDuration {
    private static final long SECOND = 1_000_000_000L;
    private static final long MINUTE = 60 * SECOND;
    private static final long HOUR = 60 * MINUTE;

    private GoDuration() {}

    static String format(long nanos) {
        if (nanos == 0) {
            return "0s";
        }
        String sign = nanos < 0 ? "-" : "";
        // Long.MIN_VALUE has no positive counterpart: Go prints it through uint64 as well.
        long u = nanos == Long.MIN_VALUE ? Long.MIN_VALUE : Math.abs(nanos);
        if (u > 0 && u < SECOND) {
            if (u < 1_000) {
                return sign + u + "ns";
            }
            if (u < 1_000_000) {
                return sign + fraction(u, 1_000, 3) + "\u00b5s";
            }
            return sign + fraction(u, 1_000_000, 6) + "ms";
        }
        if (u < 0) {
            return "-2562047h47m16.854775808s";
        }
        long hours = u / HOUR;
        u -= hours * HOUR;
        long minutes = u / MINUTE;
        u -= minutes * MINUTE;
        String seconds = fraction(u, SECOND, 9) + "s";
        if (hours > 0) {
            return sign + hours + "h" + minutes + "m" + seconds;
        }
        if (minutes > 0) {
            return sign + minutes + "m" + seconds;
        }
        return sign + seconds;
    }

    private static String fraction(long v, long scale, int digits) {
        long whole = v / scale;
        long rest = v % scale;
        if (rest == 0) {
            return Long.toString(whole);
        }
        StringBuilder frac = new StringBuilder(Long.toString(rest));
        while (frac.length() < digits) {
            frac.insert(0, '0');
        }
        int end = frac.length();
        while (frac.charAt(end - 1) == '0') {
            end--;
        }
        return whole + "." + frac.substring(0, end);
    }
}

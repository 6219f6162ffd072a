package io.watchfanout.kube.codec;

import io.watchfanout.common.JsonBuffer;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Writes a timestamp as Kubernetes' JSON does, in UTC: {@code metav1.Time} as
 * {@code 2006-01-02T15:04:05Z}, {@code metav1.MicroTime} as {@code 2006-01-02T15:04:05.000000Z}.
 * Every object carries several, and a list renders thousands: the digits go straight into the
 * buffer, with no formatter, calendar or string objects (years 0 to 9999; others, which
 * Kubernetes does not write, go through {@link DateTimeFormatter}).
 *
 * <p>Stateless; thread-safe.
 */
final class Rfc3339 {
    private static final long SECONDS_PER_DAY = 86_400;
    private static final DateTimeFormatter SECONDS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter MICROS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private Rfc3339() {}

    /**
     * Writes {@code "…"}, the instant {@code seconds} (since the epoch) plus {@code nanos}, with
     * microseconds when {@code micro} (truncated, as Go formats them).
     */
    static void write(JsonBuffer out, long seconds, int nanos, boolean micro) {
        long days = Math.floorDiv(seconds, SECONDS_PER_DAY);
        int secondOfDay = (int) Math.floorMod(seconds, SECONDS_PER_DAY);
        // Days to a civil date (proleptic Gregorian), after H. Hinnant's days_from_civil inverse.
        long z = days + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long dayOfEra = z - era * 146_097;
        long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        long mp = (5 * dayOfYear + 2) / 153;
        int day = (int) (dayOfYear - (153 * mp + 2) / 5 + 1);
        int month = (int) (mp < 10 ? mp + 3 : mp - 9);
        long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
        if (year < 0 || year > 9999 || nanos < 0 || nanos > 999_999_999) {
            Instant at = Instant.ofEpochSecond(seconds, Math.floorMod(nanos, 1_000_000_000));
            out.raw('"').ascii((micro ? MICROS : SECONDS).format(at)).raw('"');
            return;
        }
        out.raw('"');
        digits(out, year, 4);
        out.raw('-');
        digits(out, month, 2);
        out.raw('-');
        digits(out, day, 2);
        out.raw('T');
        digits(out, secondOfDay / 3600, 2);
        out.raw(':');
        digits(out, secondOfDay / 60 % 60, 2);
        out.raw(':');
        digits(out, secondOfDay % 60, 2);
        if (micro) {
            out.raw('.');
            digits(out, nanos / 1000, 6);
        }
        out.raw('Z').raw('"');
    }

    private static void digits(JsonBuffer out, long value, int width) {
        long divisor = 1;
        for (int i = 1; i < width; i++) {
            divisor *= 10;
        }
        for (; divisor > 0; divisor /= 10) {
            out.raw((char) ('0' + value / divisor % 10));
        }
    }
}

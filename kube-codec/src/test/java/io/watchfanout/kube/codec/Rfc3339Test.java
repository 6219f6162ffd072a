package io.watchfanout.kube.codec;

import static org.assertj.core.api.Assertions.assertThat;

import io.watchfanout.common.JsonBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Rfc3339Test {
    private static final DateTimeFormatter SECONDS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter MICROS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    @Test
    void writesWhatTheJdkFormatterWritesOverTheYearsKubernetesUses() {
        Random r = new Random(42);
        long[] edges = {
            0,
            -1,
            86_399,
            86_400,
            951_782_400 /* 2000-02-29 */,
            253_402_300_799L /* 9999-12-31T23:59:59 */,
            -62_167_219_200L /* 0000-01-01 */,
            1_700_000_000L
        };
        for (int i = 0; i < 20_000; i++) {
            long seconds = i < edges.length ? edges[i] : r.nextLong(-62_167_219_200L, 253_402_300_800L);
            int nanos = i % 3 == 0 ? 0 : r.nextInt(1_000_000_000);
            Instant at = Instant.ofEpochSecond(seconds, nanos);
            assertThat(write(seconds, nanos, false)).isEqualTo('"' + SECONDS.format(at) + '"');
            assertThat(write(seconds, nanos, true)).isEqualTo('"' + MICROS.format(at) + '"');
        }
    }

    @Test
    void yearsOutsideFourDigitsFallBackToTheFormatter() {
        long seconds = 253_402_300_800L; // 10000-01-01
        assertThat(write(seconds, 0, false)).isEqualTo('"' + SECONDS.format(Instant.ofEpochSecond(seconds)) + '"');
    }

    private static String write(long seconds, int nanos, boolean micro) {
        JsonBuffer out = new JsonBuffer(64);
        Rfc3339.write(out, seconds, nanos, micro);
        return new String(out.array(), 0, out.length(), StandardCharsets.US_ASCII);
    }
}

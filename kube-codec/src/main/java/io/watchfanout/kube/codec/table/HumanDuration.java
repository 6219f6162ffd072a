package io.watchfanout.kube.codec.table;

import java.time.Duration;

/**
 * An age as kubectl and kube-apiserver's printers show it (k8s.io/apimachinery
 * {@code util/duration.HumanDuration}): {@code 45s}, {@code 2m30s}, {@code 15m}, {@code 3h5m},
 * {@code 20h}, {@code 3d4h}, {@code 200d}, {@code 2y30d}, {@code 10y}. Stateless.
 */
public final class HumanDuration {
    private HumanDuration() {}

    /**
     * @param d an age; {@code <invalid>} below -1 s, {@code 0s} up to 0 (clocks a little apart)
     * @return the age as kubectl's AGE column writes it
     */
    public static String format(Duration d) {
        long seconds = d.getSeconds();
        if (seconds < -1) {
            return "<invalid>";
        }
        if (seconds < 0) {
            return "0s";
        }
        if (seconds < 60 * 2) {
            return seconds + "s";
        }
        long minutes = seconds / 60;
        if (minutes < 10) {
            long s = seconds % 60;
            return s == 0 ? minutes + "m" : minutes + "m" + s + "s";
        }
        if (minutes < 60 * 3) {
            return minutes + "m";
        }
        long hours = minutes / 60;
        if (hours < 8) {
            long m = minutes % 60;
            return m == 0 ? hours + "h" : hours + "h" + m + "m";
        }
        if (hours < 48) {
            return hours + "h";
        }
        if (hours < 24 * 8) {
            long h = hours % 24;
            return h == 0 ? hours / 24 + "d" : hours / 24 + "d" + h + "h";
        }
        if (hours < 24 * 365 * 2) {
            return hours / 24 + "d";
        }
        if (hours < 24 * 365 * 8) {
            long dy = (hours / 24) % 365;
            return dy == 0 ? hours / 24 / 365 + "y" : hours / 24 / 365 + "y" + dy + "d";
        }
        return hours / 24 / 365 + "y";
    }
}

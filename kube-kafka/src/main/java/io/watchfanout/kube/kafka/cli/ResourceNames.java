package io.watchfanout.kube.kafka.cli;

import io.watchfanout.kube.codec.resources.KubeResource;
import io.watchfanout.kube.codec.resources.KubeResources;
import java.util.Locale;
import java.util.Optional;

/**
 * A resource as kubectl takes it on its command line: the plural ({@code pods}), the singular
 * ({@code pod}), a short name ({@code po}) or the kind ({@code Pod}), each optionally followed by the
 * group or its leading part ({@code deployments.apps}, {@code deploy.apps}, {@code widgets.example.com}).
 * Without a group, the core group wins over the others, then the table's order, as kubectl's
 * priority of the core group does. Stateless.
 */
final class ResourceNames {
    private ResourceNames() {}

    /** The resource {@code name} means among {@code resources}, or empty when none. */
    static Optional<KubeResource> resolve(KubeResources resources, String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        int dot = lower.indexOf('.');
        String base = dot < 0 ? lower : lower.substring(0, dot);
        String group = dot < 0 ? null : lower.substring(dot + 1);
        KubeResource found = null;
        for (KubeResource r : resources.all()) {
            if (!names(r, base) || group != null && !groupMatches(r.group(), group)) {
                continue;
            }
            if (found == null || found.group().length() > 0 && r.group().isEmpty()) {
                found = r;
            }
        }
        return Optional.ofNullable(found);
    }

    private static boolean names(KubeResource r, String base) {
        return r.plural().equals(base)
                || r.singular().equals(base)
                || r.kind().toLowerCase(Locale.ROOT).equals(base)
                || r.shortNames().contains(base);
    }

    /** {@code apps} names {@code apps}; {@code example} names {@code example.com}; {@code v1.apps} too (kubectl's resource.version.group). */
    private static boolean groupMatches(String group, String given) {
        return group.equals(given)
                || group.startsWith(given + ".")
                || given.indexOf('.') > 0 && group.equals(given.substring(given.indexOf('.') + 1));
    }
}

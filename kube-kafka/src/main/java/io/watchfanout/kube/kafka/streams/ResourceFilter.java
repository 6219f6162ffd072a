package io.watchfanout.kube.kafka.streams;

import java.util.List;
import java.util.Set;

/**
 * Which resources get topics, by the names kubectl takes ({@code pods}, {@code deployments.apps}):
 * all of them, or only those included, less those excluded. Immutable and thread-safe.
 *
 * @param include the resources to publish; empty means every resource served
 * @param exclude the resources not to publish, even when included
 */
public record ResourceFilter(Set<String> include, Set<String> exclude) {

    /** Every resource. */
    public static final ResourceFilter ALL = new ResourceFilter(Set.of(), Set.of());

    /** Copies the sets. */
    public ResourceFilter {
        include = Set.copyOf(include);
        exclude = Set.copyOf(exclude);
    }

    /** The filter of the {@code --include} and {@code --exclude} lists. */
    public static ResourceFilter of(List<String> include, List<String> exclude) {
        return new ResourceFilter(Set.copyOf(include), Set.copyOf(exclude));
    }

    /** True when {@code qualifiedResource} ({@code pods}, {@code deployments.apps}) gets topics. */
    public boolean publishes(String qualifiedResource) {
        return (include.isEmpty() || include.contains(qualifiedResource)) && !exclude.contains(qualifiedResource);
    }
}

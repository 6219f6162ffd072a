package io.watchfanout.fanout.security;

import io.etcd.jetcd.api.Permission;
import io.watchfanout.common.KeyRange;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * etcd's users and roles as read at one auth revision, and what they allow: a user's roles'
 * permissions merged per verb into a {@link RangeCover}, as etcd's {@code getMergedPerms} does,
 * so that a request is allowed exactly when etcd's {@code checkKeyInterval} would allow it. A
 * permission {@code READ} grants {@link Verb#READ} and {@link Verb#WATCH}, {@code WRITE} grants
 * {@link Verb#WRITE}, {@code READWRITE} all three; its {@code range_end} is empty for one key,
 * {@code "\0"} for every key from {@code key} on, else the exclusive end (a prefix is stored as
 * {@code [prefix, prefixEnd)}). A user with the role {@code root} may do everything; a name etcd
 * does not know may do nothing.
 *
 * <p>Immutable and thread-safe. Equal when the users' roles and the roles' permissions are.
 */
final class EtcdPermissions {
    /** etcd's all-powerful role. */
    static final String ROOT_ROLE = "root";

    private final Map<String, Set<String>> userRoles;
    private final Map<String, List<Permission>> rolePermissions;
    /** Per user: null for root, else the cover of each verb. */
    private final Map<String, Map<Verb, RangeCover>> grants = new HashMap<>();

    /**
     * @param userRoles every user's roles
     * @param rolePermissions every role's permissions (a role a user names but etcd does not
     *     know grants nothing)
     */
    EtcdPermissions(Map<String, Set<String>> userRoles, Map<String, List<Permission>> rolePermissions) {
        this.userRoles = Map.copyOf(userRoles);
        this.rolePermissions = Map.copyOf(rolePermissions);
        for (Map.Entry<String, Set<String>> u : this.userRoles.entrySet()) {
            grants.put(u.getKey(), u.getValue().contains(ROOT_ROLE) ? null : covers(u.getValue()));
        }
    }

    /** True when etcd's user {@code user} may {@code verb} every key of {@code range}. */
    boolean allows(String user, Verb verb, KeyRange range) {
        if (!grants.containsKey(user)) {
            return false;
        }
        Map<Verb, RangeCover> mine = grants.get(user);
        return mine == null || mine.get(verb).covers(range);
    }

    /** The number of users, for the policy's description. */
    int users() {
        return userRoles.size();
    }

    private Map<Verb, RangeCover> covers(Set<String> roles) {
        Map<Verb, List<KeyRange>> ranges = new EnumMap<>(Verb.class);
        for (Verb v : Verb.values()) {
            ranges.put(v, new ArrayList<>());
        }
        for (String role : roles) {
            for (Permission p : rolePermissions.getOrDefault(role, List.of())) {
                KeyRange r = range(p);
                if (r == null) {
                    continue;
                }
                for (Verb v : verbs(p.getPermType())) {
                    ranges.get(v).add(r);
                }
            }
        }
        Map<Verb, RangeCover> out = new EnumMap<>(Verb.class);
        ranges.forEach((v, list) -> out.put(v, RangeCover.of(list)));
        return out;
    }

    /** The keys of a permission, or null for one whose end does not sort after its key (etcd refuses such grants). */
    static KeyRange range(Permission p) {
        try {
            return KeyRange.of(p.getKey(), p.getRangeEnd());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static Set<Verb> verbs(Permission.Type type) {
        return switch (type) {
            case READ -> Set.of(Verb.READ, Verb.WATCH);
            case WRITE -> Set.of(Verb.WRITE);
            case READWRITE -> Set.of(Verb.READ, Verb.WATCH, Verb.WRITE);
            case UNRECOGNIZED -> Set.of();
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EtcdPermissions p
                && p.userRoles.equals(userRoles)
                && p.rolePermissions.equals(rolePermissions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(userRoles, rolePermissions);
    }
}

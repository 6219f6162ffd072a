package io.watchfanout.fanout.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.common.KeyRange;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyFileTest {
    private static final Identity ALICE = Identity.of("alice", Identity.Method.TOKEN);
    private static final Identity READER = new Identity("bob", Set.of("readers"), Identity.Method.JWT);

    @TempDir
    Path dir;

    private static KeyRange prefix(String p) {
        return KeyRange.prefix(ByteString.copyFromUtf8(p));
    }

    private static KeyRange key(String k) {
        return KeyRange.single(ByteString.copyFromUtf8(k));
    }

    private Path write(String json) throws IOException {
        Path file = dir.resolve("policy.json");
        Files.writeString(file, json);
        return file;
    }

    /** Writes a new version that a reload sees even within the file system's time resolution. */
    private static void rewrite(Path file, String json) throws IOException {
        FileTime before = Files.getLastModifiedTime(file);
        Files.writeString(file, json);
        Files.setLastModifiedTime(file, FileTime.fromMillis(before.toMillis() + 2000));
    }

    @Test
    void grantsBySubjectAndGroupOnPrefixesKeysAndRanges() throws IOException {
        PolicyFile policy = new PolicyFile(write("""
                {"rules": [
                  {"subjects": ["alice"], "verbs": ["*"], "prefixes": ["/a/"]},
                  {"groups": ["readers"], "verbs": ["read", "watch"], "keys": ["/k"],
                   "ranges": [{"key": "/r/", "rangeEnd": "/s/"}]}
                ]}
                """));

        assertThat(policy.allows(ALICE, Verb.WRITE, prefix("/a/x"))).isTrue();
        assertThat(policy.allows(ALICE, Verb.READ, key("/k"))).isFalse();
        assertThat(policy.allows(READER, Verb.WATCH, key("/k"))).isTrue();
        assertThat(policy.allows(READER, Verb.READ, prefix("/r/"))).isTrue();
        assertThat(policy.allows(READER, Verb.WRITE, key("/k"))).isFalse();
        assertThat(policy.allows(Identity.ANONYMOUS, Verb.READ, key("/k"))).isFalse();
    }

    @Test
    void aStarSubjectMatchesAnonymous() throws IOException {
        PolicyFile policy = new PolicyFile(write(
                "{\"rules\": [{\"subjects\": [\"*\"], \"verbs\": [\"read\"], " + "\"prefixes\": [\"/public/\"]}]}"));

        assertThat(policy.allows(Identity.ANONYMOUS, Verb.READ, prefix("/public/")))
                .isTrue();
        assertThat(policy.allows(Identity.ANONYMOUS, Verb.READ, KeyRange.all())).isFalse();
    }

    @Test
    void grantsOfSeveralRulesAreUnited() throws IOException {
        PolicyFile policy = new PolicyFile(write("""
                {"rules": [
                  {"subjects": ["alice"], "verbs": ["read"], "ranges": [{"key": "/a", "rangeEnd": "/c"}]},
                  {"subjects": ["alice"], "verbs": ["read"], "ranges": [{"key": "/c", "rangeEnd": "\\u0000"}]}
                ]}
                """));

        assertThat(policy.allows(
                        ALICE, Verb.READ, KeyRange.of(ByteString.copyFromUtf8("/b"), ByteString.copyFrom(new byte[] {0
                        }))))
                .isTrue();
    }

    @Test
    void anOpenEndedRequestFromInsideAGrantedPrefixIsRefused() throws IOException {
        PolicyFile policy = new PolicyFile(write("{\"rules\": [{\"subjects\": [\"alice\"], \"verbs\": [\"read\"], "
                + "\"prefixes\": [\"/registry/configmaps/\"]}]}"));

        assertThat(policy.allows(
                        ALICE,
                        Verb.READ,
                        KeyRange.of(ByteString.copyFromUtf8("/registry/configmaps/x"), ByteString.copyFrom(new byte[] {0
                        }))))
                .isFalse();
    }

    @Test
    void aChangedFileIsReloaded() throws IOException {
        Path file = write("{\"rules\": [{\"subjects\": [\"alice\"], \"verbs\": [\"read\"], \"prefixes\": [\"/a/\"]}]}");
        PolicyFile policy = new PolicyFile(file);
        assertThat(policy.reload()).isFalse();

        rewrite(file, "{\"rules\": [{\"subjects\": [\"alice\"], \"verbs\": [\"read\"], \"prefixes\": [\"/b/\"]}]}");

        assertThat(policy.reload()).isTrue();
        assertThat(policy.allows(ALICE, Verb.READ, prefix("/a/"))).isFalse();
        assertThat(policy.allows(ALICE, Verb.READ, prefix("/b/"))).isTrue();
        assertThat(policy.reload()).isFalse();
    }

    @Test
    void aBrokenNewFileKeepsTheOldRules() throws IOException {
        Path file = write("{\"rules\": [{\"subjects\": [\"alice\"], \"verbs\": [\"read\"], \"prefixes\": [\"/a/\"]}]}");
        PolicyFile policy = new PolicyFile(file);

        rewrite(file, "{\"rules\": [{\"subjects\": [\"alice\"], \"verbs\": [\"read\"], ");

        assertThatThrownBy(policy::reload).isInstanceOf(IOException.class).hasMessageContaining("not a valid policy");
        assertThat(policy.allows(ALICE, Verb.READ, prefix("/a/"))).isTrue();
    }

    @Test
    void unknownFieldsAreRefused() throws IOException {
        Path top = write("{\"rules\": [], \"rulez\": []}");
        assertThatThrownBy(() -> new PolicyFile(top)).hasMessageContaining("unknown field \"rulez\"");

        Path rule = write("{\"rules\": [{\"subject\": [\"alice\"], \"verbs\": [\"read\"], \"prefixes\": [\"/a/\"]}]}");
        assertThatThrownBy(() -> new PolicyFile(rule)).hasMessageContaining("rule 0: unknown field \"subject\"");
    }

    @Test
    void invalidRulesNameTheProblem() throws IOException {
        Path verb = write("{\"rules\": [{\"subjects\": [\"a\"], \"verbs\": [\"list\"], \"prefixes\": [\"/\"]}]}");
        assertThatThrownBy(() -> new PolicyFile(verb)).hasMessageContaining("unknown verb \"list\"");

        Path keys = write("{\"rules\": [{\"subjects\": [\"a\"], \"verbs\": [\"read\"]}]}");
        assertThatThrownBy(() -> new PolicyFile(keys)).hasMessageContaining("grants no keys");

        Path range = write("{\"rules\": [{\"subjects\": [\"a\"], \"verbs\": [\"read\"], "
                + "\"ranges\": [{\"key\": \"/b\", \"rangeEnd\": \"/a\"}]}]}");
        assertThatThrownBy(() -> new PolicyFile(range)).hasMessageContaining("range 0");
    }
}

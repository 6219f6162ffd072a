package io.watchfanout.fanout.v1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.watchfanout.fanout.read.ContinueToken;
import io.watchfanout.fanout.read.ReadMode;
import io.watchfanout.fanout.transport.ApiException;
import io.watchfanout.fanout.transport.QueryParams;
import org.junit.jupiter.api.Test;

/** The table of kube-apiserver's list semantics, and its refusals, as {@link ListRead} decides them. */
class ListReadTest {
    private static final String TOKEN =
            new ContinueToken(42, ByteString.copyFromUtf8("/a/b"), 3).encode(ContinueToken.Form.COMPACT);

    private static ListRead read(String query) throws ApiException {
        return ListRead.parse(QueryParams.parse(query));
    }

    private static String refusal(String query) {
        try {
            read(query);
        } catch (ApiException e) {
            assertThat(e.status().getCode()).as(query).isEqualTo(400);
            assertThat(e.status().getReason()).as(query).isEqualTo("BadRequest");
            return e.status().getMessage();
        }
        throw new AssertionError(query + " was accepted");
    }

    @Test
    void withoutResourceVersionMatchAbsentIsMostRecentZeroAnyAndNNotOlderThanOrExactWhenPaged() throws Exception {
        assertThat(read("key=a").mode()).isEqualTo(ReadMode.MOST_RECENT);
        assertThat(read("key=a&limit=5").mode()).isEqualTo(ReadMode.MOST_RECENT);
        assertThat(read("key=a&resourceVersion=0").mode()).isEqualTo(ReadMode.ANY);
        assertThat(read("key=a&resourceVersion=0&limit=5").mode()).isEqualTo(ReadMode.ANY);
        assertThat(read("key=a&resourceVersion=7")).isEqualTo(new ListRead(ReadMode.NOT_OLDER_THAN, 7, 0, null));
        assertThat(read("key=a&resourceVersion=7&limit=0").mode()).isEqualTo(ReadMode.NOT_OLDER_THAN);
        // Kubernetes' legacy rule: a first page with a limit at resourceVersion=N is exact.
        assertThat(read("key=a&resourceVersion=7&limit=5")).isEqualTo(new ListRead(ReadMode.EXACT, 7, 5, null));
        // An empty match is no match, as in Kubernetes.
        assertThat(read("key=a&resourceVersion=7&resourceVersionMatch=").mode()).isEqualTo(ReadMode.NOT_OLDER_THAN);
        assertThat(read("key=a&resourceVersionMatch=").mode()).isEqualTo(ReadMode.MOST_RECENT);
    }

    @Test
    void notOlderThanAndExact() throws Exception {
        assertThat(read("key=a&resourceVersion=7&resourceVersionMatch=NotOlderThan"))
                .isEqualTo(new ListRead(ReadMode.NOT_OLDER_THAN, 7, 0, null));
        assertThat(read("key=a&resourceVersion=7&resourceVersionMatch=NotOlderThan&limit=3"))
                .isEqualTo(new ListRead(ReadMode.NOT_OLDER_THAN, 7, 3, null));
        assertThat(read("key=a&resourceVersion=0&resourceVersionMatch=NotOlderThan")
                        .mode())
                .isEqualTo(ReadMode.ANY);
        assertThat(read("key=a&resourceVersion=7&resourceVersionMatch=Exact"))
                .isEqualTo(new ListRead(ReadMode.EXACT, 7, 0, null));
        assertThat(read("key=a&resourceVersion=7&resourceVersionMatch=Exact&limit=2"))
                .isEqualTo(new ListRead(ReadMode.EXACT, 7, 2, null));
    }

    @Test
    void continueCarriesTheTokenAndAllowsOnlyResourceVersionZero() throws Exception {
        ListRead r = read("key=a&limit=2&continue=" + TOKEN);
        assertThat(r.mode()).isEqualTo(ReadMode.CONTINUE);
        assertThat(r.token()).isEqualTo(new ContinueToken(42, ByteString.copyFromUtf8("/a/b"), 3));
        assertThat(r.limit()).isEqualTo(2);
        // Kubernetes: "Invalid, treated as Continue Token, Exact".
        assertThat(read("key=a&resourceVersion=0&continue=" + TOKEN).mode()).isEqualTo(ReadMode.CONTINUE);
        assertThat(refusal("key=a&resourceVersion=5&continue=" + TOKEN))
                .startsWith("specifying resource version is not allowed when using continue (expected: ");
    }

    @Test
    void refusesWhatKubeApiserverRefusesWithItsWords() {
        assertThat(refusal("key=a&resourceVersionMatch=NotOlderThan"))
                .startsWith(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                                + "provided (expected: ");
        assertThat(refusal("key=a&resourceVersionMatch=Exact"))
                .startsWith(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion");
        assertThat(refusal("key=a&resourceVersion=0&resourceVersionMatch=Exact"))
                .startsWith("resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for "
                        + "resourceVersion \"0\" (expected: ");
        assertThat(refusal("key=a&resourceVersion=5&resourceVersionMatch=exact"))
                .startsWith("resourceVersionMatch: Unsupported value: \"exact\": supported values: \"Exact\", "
                        + "\"NotOlderThan\", \"\" (expected: ");
        assertThat(refusal("key=a&resourceVersion=5&resourceVersionMatch=Newest"))
                .contains("\"Newest\"");
        assertThat(refusal("key=a&resourceVersionMatch=NotOlderThan&continue=" + TOKEN))
                .startsWith(
                        "[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                                + "provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is "
                                + "provided] (expected: ");
        assertThat(refusal("key=a&resourceVersion=0&resourceVersionMatch=NotOlderThan&continue=" + TOKEN))
                .startsWith(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided");
        assertThat(refusal("key=a&resourceVersion=3&resourceVersionMatch=Exact&continue=" + TOKEN))
                .startsWith(
                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided");
        assertThat(refusal("key=a&resourceVersion=x")).contains("parameter resourceVersion");
        assertThat(refusal("key=a&continue=AAAA")).contains("parameter continue");
    }

    @Test
    void watchTakesNotOlderThanOnlyAndOnlyWithSendInitialEvents() throws Exception {
        ListRead.checkWatch(QueryParams.parse("key=a&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"));
        ListRead.checkWatch(QueryParams.parse("key=a&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"));
        ListRead.checkWatch(QueryParams.parse("key=a&sendInitialEvents=true&resourceVersion=5"));
        ListRead.checkWatch(QueryParams.parse("key=a&resourceVersionMatch="));
        assertThatThrownBy(() -> ListRead.checkWatch(QueryParams.parse("key=a&resourceVersionMatch=NotOlderThan")))
                .isInstanceOfSatisfying(
                        ApiException.class,
                        e -> assertThat(e.status().getMessage())
                                .startsWith(
                                        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                                                + "sendInitialEvents is provided (expected: "));
        assertThatThrownBy(() -> ListRead.checkWatch(
                        QueryParams.parse("key=a&sendInitialEvents=true&resourceVersion=5&resourceVersionMatch=Exact")))
                .isInstanceOfSatisfying(
                        ApiException.class,
                        e -> assertThat(e.status().getMessage())
                                .startsWith(
                                        "resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\" "
                                                + "(expected: "));
    }

    @Test
    void aTokenItDidNotMakeIsRefusedInTheApisWords() {
        for (String bad : java.util.List.of("!!", "AA", TOKEN + "AA")) {
            assertThat(refusal("key=a&continue=" + bad))
                    .as(bad)
                    .contains("parameter continue")
                    .contains("expected");
        }
    }
}

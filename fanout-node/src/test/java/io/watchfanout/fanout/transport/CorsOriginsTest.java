package io.watchfanout.fanout.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class CorsOriginsTest {
    @Test
    void originsAreMatchedAsBrowsersSerialiseThem() {
        CorsOrigins o = CorsOrigins.of(List.of(
                " https://App.Example.com/ ", "http://127.0.0.1:8080", "http://x.test:80", "https://y.test:443", ""));
        assertThat(o.allows("https://app.example.com")).isTrue();
        assertThat(o.allows("http://127.0.0.1:8080")).isTrue();
        assertThat(o.allows("http://x.test")).isTrue();
        assertThat(o.allows("https://y.test")).isTrue();
        assertThat(o.allows("http://app.example.com")).as("another scheme").isFalse();
        assertThat(o.allows("http://127.0.0.1:8081")).as("another port").isFalse();
        assertThat(o.allows("null")).isFalse();
        assertThat(o.isEmpty()).isFalse();
        assertThat(o).hasToString("https://app.example.com,http://127.0.0.1:8080,http://x.test,https://y.test");
    }

    @Test
    void noneByDefaultAndStarForAny() {
        assertThat(CorsOrigins.of(List.of())).isSameAs(CorsOrigins.NONE);
        assertThat(CorsOrigins.of(List.of(""))).isSameAs(CorsOrigins.NONE);
        assertThat(CorsOrigins.NONE.allows("http://127.0.0.1")).isFalse();
        assertThat(CorsOrigins.NONE).hasToString("none");
        CorsOrigins any = CorsOrigins.of(List.of("*"));
        assertThat(any.allows("https://anything.test:1234")).isTrue();
        assertThat(any.allows("null")).isTrue();
        assertThat(any).hasToString("*");
    }

    @Test
    void anEntryThatIsNotAnOriginIsRefusedNamingTheFlag() {
        for (String bad : List.of(
                "https://a.test/app",
                "a.test",
                "https://a.test?x=1",
                "null",
                "https://u@a.test",
                "http://",
                "https://a.test#f")) {
            assertThatThrownBy(() -> CorsOrigins.of(List.of(bad)))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("--cors-allowed-origins: '" + bad + "' (expected: origins such as");
        }
    }
}

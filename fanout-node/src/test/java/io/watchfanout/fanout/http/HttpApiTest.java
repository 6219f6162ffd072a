package io.watchfanout.fanout.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.frame.FrameKind;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.KeyValue;
import io.watchfanout.schema.v1.KeyValueList;
import io.watchfanout.schema.v1.Status;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The HTTP API against real HTTP clients, fed from memory (no Kafka). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpApiTest {
  private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private TestNode node;

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  private HttpResponse<String> get(String pathAndQuery, String accept) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(node.uri(pathAndQuery));
    if (accept != null) {
      b.header("Accept", accept);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<InputStream> stream(String pathAndQuery, String accept) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(node.uri(pathAndQuery));
    if (accept != null) {
      b.header("Accept", accept);
    }
    return client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
  }

  private static Status status(HttpResponse<String> r) throws Exception {
    Status.Builder b = Status.newBuilder();
    JsonFormat.parser().merge(r.body(), b);
    return b.build();
  }

  private static WatchEvent nextJson(BufferedReader in) throws IOException {
    String line = in.readLine();
    assertThat(line).as("stream ended early").isNotNull();
    return Frames.parseJsonLine(line);
  }

  @Test
  void jsonWatchStreamsMappedEventsAsLines() throws Exception {
    node = new TestNode(1000, 256, true);
    HttpResponse<InputStream> r = stream("/v1/watch?key=%2Fa%2F&prefix=true", null);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    node.feed(node.etcd.put("/a/1", "x"));
    node.feed(node.etcd.put("/b/1", "ignored"));
    node.feed(node.etcd.put("/a/1", "y"));
    node.feed(node.etcd.delete("/a/1"));
    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      WatchEvent added = nextJson(in);
      WatchEvent modified = nextJson(in);
      WatchEvent deleted = nextJson(in);
      assertThat(added.getType()).isEqualTo(WatchEvent.Type.ADDED);
      assertThat(added.getObject().getValue().toStringUtf8()).isEqualTo("x");
      assertThat(added.getResourceVersion()).isEqualTo(101);
      assertThat(modified.getType()).isEqualTo(WatchEvent.Type.MODIFIED);
      assertThat(modified.getResourceVersion()).isEqualTo(103);
      assertThat(deleted.getType()).isEqualTo(WatchEvent.Type.DELETED);
      assertThat(deleted.getObject().getValue().toStringUtf8()).as("the previous key-value").isEqualTo("y");
      assertThat(deleted.getResourceVersion()).isEqualTo(104);
    }
  }

  @Test
  void protobufWatchStreamsDelimitedFramesAndRawKeysAreBytes() throws Exception {
    node = new TestNode(1000, 256, true);
    HttpResponse<InputStream> r = stream("/v1/watch?key=%00%FF&rangeEnd=%00", "application/x-protobuf");
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/x-protobuf");
    node.feed(node.etcd.put("\u0000x", "below the range"));
    node.feed(node.etcd.txn(EtcdLog.Op.put("zz", "1"), EtcdLog.Op.put("\u00ff", "2")));
    InputStream in = r.body();
    WatchEvent first = WatchEvent.parseDelimitedFrom(in);
    WatchEvent second = WatchEvent.parseDelimitedFrom(in);
    assertThat(first.getObject().getKey().toStringUtf8()).isEqualTo("zz");
    assertThat(first.getIndex()).isEqualTo(0);
    assertThat(first.getCount()).isEqualTo(2);
    assertThat(first.getResourceVersion()).as("every frame carries its revision").isEqualTo(102);
    assertThat(second.getObject().getKey().toStringUtf8()).isEqualTo("\u00ff");
    assertThat(second.getResourceVersion()).isEqualTo(102);
    in.close();
  }

  @Test
  void bookmarksAdvanceWithProgressAndTheStreamEndsWithOneAfterTimeoutSeconds() throws Exception {
    node = new TestNode(1000, 256, true);
    HttpResponse<InputStream> r = stream("/v1/watch?key=%2Fquiet%2F&prefix=true&allowWatchBookmarks=true&timeoutSeconds=2", null);
    node.feed(node.etcd.put("/busy", "1"));
    node.feed(node.etcd.progress());
    long target = node.etcd.revision();
    List<WatchEvent> got = new ArrayList<>();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        got.add(Frames.parseJsonLine(line));
      }
    }
    assertThat(got).isNotEmpty().allMatch(e -> e.getType() == WatchEvent.Type.BOOKMARK);
    assertThat(got.get(got.size() - 1).getResourceVersion()).as("final bookmark").isEqualTo(target);
    assertThat(node.hub.stats().bookmarksSent()).isGreaterThanOrEqualTo(got.size());
  }

  @Test
  void resumesFromAResourceVersionAndRejectsTooOldOrFutureOnes() throws Exception {
    node = new TestNode(5, 256, true);
    for (int i = 0; i < 10; i++) {
      node.feed(node.etcd.put("/k" + i, "v"));
    }
    HttpResponse<InputStream> r = stream("/v1/watch?key=%2F&prefix=true&resourceVersion=108", null);
    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      assertThat(nextJson(in).getResourceVersion()).isEqualTo(109);
      assertThat(nextJson(in).getResourceVersion()).isEqualTo(110);
    }
    HttpResponse<String> old = get("/v1/watch?key=%2F&prefix=true&resourceVersion=101", null);
    assertThat(old.statusCode()).isEqualTo(410);
    assertThat(status(old).getReason()).isEqualTo("Expired");
    assertThat(status(old).getCode()).isEqualTo(410);
    HttpResponse<String> future = get("/v1/watch?key=%2F&prefix=true&resourceVersion=999", null);
    assertThat(future.statusCode()).isEqualTo(504);
    assertThat(status(future).getReason()).isEqualTo("Timeout");
    assertThat(future.headers().firstValue("Retry-After")).hasValue("1");
  }

  @Test
  void aWatchAheadOfTheNodeStartsOnceTheNodeCatchesUp() throws Exception {
    node = new TestNode(1000, 256, true);
    java.util.concurrent.CompletableFuture<HttpResponse<InputStream>> pending = client.sendAsync(
        HttpRequest.newBuilder(node.uri("/v1/watch?key=a&resourceVersion=101")).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    Thread.sleep(50);
    node.feed(node.etcd.put("b", "1"));
    node.feed(node.etcd.put("a", "1"));
    HttpResponse<InputStream> r = pending.get(10, TimeUnit.SECONDS);
    assertThat(r.statusCode()).isEqualTo(200);
    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      assertThat(nextJson(in).getObject().getKey().toStringUtf8()).isEqualTo("a");
    }
  }

  @Test
  void errorsBeforeStreamingGetTheirStatusAndTheNodeKeepsServing() throws Exception {
    node = new TestNode(1000, 256, true);
    String[][] bad = {
        {"/v1/watch", "key"},
        {"/v1/watch?key=a&resourceVersion=abc", "resourceVersion"},
        {"/v1/watch?key=a&resourceVersion=-1", "resourceVersion"},
        {"/v1/watch?key=a&allowWatchBookmarks=yes", "allowWatchBookmarks"},
        {"/v1/watch?key=a&sendInitialEvents=maybe", "sendInitialEvents"},
        {"/v1/watch?key=a&timeoutSeconds=x", "timeoutSeconds"},
        {"/v1/watch?key=b&rangeEnd=a", "rangeEnd"},
        {"/v1/watch?key=a&key=b", "key"},
        {"/v1/watch?key=a&prefix=true&rangeEnd=b", "rangeEnd"},
        {"/v1/watch?key=", "key"},
        {"/v1/kv?key=a&limit=-5", "limit"},
        {"/v1/kv?key=a&continue=%25%25", "continue"},
    };
    for (String[] b : bad) {
      HttpResponse<String> r = get(b[0], null);
      assertThat(r.statusCode()).as(b[0]).isEqualTo(400);
      assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
      Status s = status(r);
      assertThat(s.getReason()).isEqualTo("BadRequest");
      assertThat(s.getCode()).isEqualTo(400);
      assertThat(s.getMessage()).as(b[0]).contains(b[1]).contains("expected");
    }
    String raw = rawGet("/v1/watch?key=%zz");
    // Undertow's request parser itself refuses malformed percent-encoding (a bare 400).
    assertThat(raw).startsWith("HTTP/1.1 400");
    HttpResponse<String> notAcceptable = get("/v1/watch?key=a", "text/html");
    assertThat(notAcceptable.statusCode()).isEqualTo(406);
    assertThat(status(notAcceptable).getReason()).isEqualTo("NotAcceptable");
    HttpResponse<InputStream> any = stream("/v1/watch?key=a", "*/*");
    assertThat(any.statusCode()).isEqualTo(200);
    assertThat(any.headers().firstValue("Content-Type")).hasValue("application/json");
    any.body().close();
    HttpResponse<String> notFound = get("/v2/nothing", null);
    assertThat(notFound.statusCode()).isEqualTo(404);
    assertThat(status(notFound).getReason()).isEqualTo("NotFound");
    // Still serving.
    node.feed(node.etcd.put("a", "1"));
    HttpResponse<String> list = get("/v1/kv?key=a", null);
    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(list.body()).contains("\"resourceVersion\":\"101\"");
  }

  @Test
  void notReadyAnswers503WithRetryAfterAndReadyzFollowsTheCache() throws Exception {
    node = new TestNode(1000, 256, false);
    HttpResponse<String> r = get("/v1/watch?key=a", null);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(status(r).getReason()).isEqualTo("NotReady");
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
    assertThat(get("/v1/kv?key=a", null).statusCode()).isEqualTo(503);
    assertThat(get("/readyz", null).statusCode()).isEqualTo(503);
    assertThat(get("/livez", null).statusCode()).isEqualTo(200);
    node.hub.markReady();
    assertThat(get("/readyz", null).statusCode()).isEqualTo(200);
    node.hub.fail("revision chain broken at offset 12");
    assertThat(get("/readyz", null).body()).contains("offset 12");
    HttpResponse<String> failed = get("/v1/kv?key=a", null);
    assertThat(failed.statusCode()).isEqualTo(503);
    assertThat(status(failed).getMessage()).contains("offset 12");
    assertThat(get("/metrics", null).body()).contains("watchfanout_cache_failed 1.0");
  }

  @Test
  void kvListsPageByLimitAndContinueInBothEncodings() throws Exception {
    node = new TestNode(1000, 256, true);
    for (int i = 0; i < 7; i++) {
      node.feed(node.etcd.put("/p/" + i, "v" + i));
    }
    node.feed(node.etcd.put("/q", "other"));
    List<KeyValue> all = new ArrayList<>();
    String token = "";
    int pages = 0;
    do {
      HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(node.uri("/v1/kv?key=%2Fp%2F&prefix=true&limit=3"
          + (token.isEmpty() ? "" : "&continue=" + URLEncoder.encode(token, StandardCharsets.UTF_8))))
          .header("Accept", "application/x-protobuf").build(), HttpResponse.BodyHandlers.ofByteArray());
      assertThat(r.statusCode()).isEqualTo(200);
      KeyValueList page = KeyValueList.parseFrom(r.body());
      assertThat(page.getResourceVersion()).isEqualTo(108);
      all.addAll(page.getKvsList());
      token = page.getContinue();
      pages++;
      node.feed(node.etcd.put("/p/0", "changed after the first page"));
    } while (!token.isEmpty());
    assertThat(pages).isEqualTo(3);
    assertThat(all).extracting(kv -> kv.getValue().toStringUtf8()).containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6");
    HttpResponse<String> json = get("/v1/kv?key=%2Fp%2F0", null);
    KeyValueList.Builder b = KeyValueList.newBuilder();
    JsonFormat.parser().merge(json.body(), b);
    assertThat(b.getKvs(0).getValue().toStringUtf8()).isEqualTo("changed after the first page");
    assertThat(b.getResourceVersion()).isEqualTo(node.etcd.revision());
    assertThat(get("/v1/kv?key=a&resourceVersion=9999", null).statusCode()).isEqualTo(504);
  }

  @Test
  void chunksAreFramedByHandAndManyWaitingFramesGoOutInOneChunk() throws Exception {
    node = new TestNode(100_000, 4096, true);
    try (Socket s = new Socket("127.0.0.1", node.api.port())) {
      OutputStream out = s.getOutputStream();
      out.write("GET /v1/watch?key=k&prefix=true HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      String headers = readHeaders(in);
      assertThat(headers).startsWith("HTTP/1.1 200").containsIgnoringCase("transfer-encoding: chunked");
      node.feed(node.etcd.put("k0", "v"));
      // Wait until the first frame went out, then queue many frames while the stream is idle
      // and let them go out together.
      String firstChunk = readChunk(in);
      assertThat(firstChunk.split("\n")).hasSize(1);
      synchronized (node) {
        for (int i = 1; i <= 40; i++) {
          node.applier.accept(node.etcd.put("k" + i, "v").get(0));
        }
      }
      int lines = 0;
      int chunks = 0;
      while (lines < 40) {
        String chunk = readChunk(in);
        chunks++;
        lines += chunk.split("\n").length;
      }
      assertThat(lines).isEqualTo(40);
      assertThat(chunks).as("gathered writes: fewer chunks than frames").isLessThan(40);
    }
  }

  @Test
  void aStalledSocketIsParkedWhileTwentyWatchersGetEverythingAndThenCatchesUp() throws Exception {
    node = new TestNode(100_000, 16, true);
    Socket slow = new Socket();
    slow.setReceiveBufferSize(4096);
    slow.connect(new java.net.InetSocketAddress("127.0.0.1", node.api.port()));
    slow.getOutputStream().write("GET /v1/watch?key=%2F&prefix=true HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    InputStream slowIn = slow.getInputStream();
    readHeaders(slowIn);
    List<HttpResponse<InputStream>> fast = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      fast.add(stream("/v1/watch?key=%2F&prefix=true", i % 2 == 0 ? null : "application/x-protobuf"));
    }
    List<Thread> readers = new ArrayList<>();
    List<List<Long>> fastGot = new ArrayList<>();
    int events = 2000;
    for (int i = 0; i < 20; i++) {
      List<Long> got = java.util.Collections.synchronizedList(new ArrayList<>());
      fastGot.add(got);
      InputStream in = fast.get(i).body();
      boolean json = i % 2 == 0;
      Thread t = new Thread(() -> {
        try {
          BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
          while (got.size() < events) {
            WatchEvent e = json ? Frames.parseJsonLine(r.readLine()) : WatchEvent.parseDelimitedFrom(in);
            got.add(e.getResourceVersion());
          }
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      t.start();
      readers.add(t);
    }
    String value = "x".repeat(2000);
    for (int i = 0; i < events; i++) {
      node.feed(node.etcd.put("/k" + (i % 50), value));
    }
    for (Thread t : readers) {
      t.join(30_000);
    }
    List<Long> expected = new ArrayList<>();
    for (long r = 101; r < 101 + events; r++) {
      expected.add(r);
    }
    for (List<Long> got : fastGot) {
      assertThat(got).containsExactlyElementsOf(expected);
    }
    assertThat(node.hub.stats().parked()).as("the stalled socket was parked").isGreaterThanOrEqualTo(1);
    // Now the slow client reads everything: every event, in order, nothing repeated.
    List<Long> slowGot = new ArrayList<>();
    StringBuilder partial = new StringBuilder();
    while (slowGot.size() < events) {
      for (String line : (partial + readChunk(slowIn)).split("\n", -1)) {
        partial.setLength(0);
        partial.append(line);
        if (line.endsWith("}")) {
          slowGot.add(Frames.parseJsonLine(line).getResourceVersion());
          partial.setLength(0);
        }
      }
    }
    assertThat(slowGot).containsExactlyElementsOf(expected);
    await().atMost(Duration.ofSeconds(5)).until(() -> node.hub.stats().unparked() >= 1);
    assertThat(node.hub.frameEncoder().encodes(Encoding.JSON, FrameKind.EVENT)).isEqualTo(events);
    assertThat(node.hub.frameEncoder().encodes(Encoding.PROTOBUF, FrameKind.EVENT)).isEqualTo(events);
    slow.close();
  }

  private String rawGet(String pathAndQuery) throws IOException {
    try (Socket s = new Socket("127.0.0.1", node.api.port())) {
      s.getOutputStream().write(("GET " + pathAndQuery + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static String readHeaders(InputStream in) throws IOException {
    StringBuilder sb = new StringBuilder();
    while (!sb.toString().endsWith("\r\n\r\n")) {
      int c = in.read();
      if (c < 0) {
        throw new IOException("EOF in headers: " + sb);
      }
      sb.append((char) c);
    }
    return sb.toString();
  }

  /** Reads one HTTP chunk and returns its data as text. */
  private static String readChunk(InputStream in) throws IOException {
    StringBuilder size = new StringBuilder();
    int c;
    while ((c = in.read()) != '\r') {
      if (c < 0) {
        throw new IOException("EOF");
      }
      size.append((char) c);
    }
    in.read();
    int n = Integer.parseInt(size.toString(), 16);
    byte[] data = in.readNBytes(n);
    in.readNBytes(2);
    return new String(data, StandardCharsets.UTF_8);
  }
}

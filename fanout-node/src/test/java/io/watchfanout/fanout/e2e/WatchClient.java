package io.watchfanout.fanout.e2e;

import com.google.protobuf.util.JsonFormat;
import io.watchfanout.fanout.frame.Encoding;
import io.watchfanout.fanout.testing.Frames;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A watch client as a user would write one against the README's "The watch protocol": streams {@code GET /v1/watch},
 * decodes JSON lines, delimited protobuf or Server-Sent Events, and resumes on another node
 * from its last complete point (the last bookmark or the last event of a revision), dropping
 * the frames of a revision that was cut in the middle. An SSE client resumes as an
 * EventSource does: the same URL, and the last {@code id} it received as
 * {@code Last-Event-ID}. Thread-safe.
 */
public final class WatchClient implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final String name;
  private final String query;
  private final Encoding encoding;
  private final List<WatchEvent> frames = new ArrayList<>();
  /** SSE: how many frames had arrived when the last {@code id} came, and that id (-1: none). */
  private int framesAtLastId;
  private long lastEventId = -1;
  private volatile Thread reader;
  private volatile InputStream body;
  private volatile boolean closed;
  private volatile boolean ended;
  private volatile Throwable failure;

  /**
   * @param name for messages
   * @param key the watched key (raw string, encoded here)
   * @param mode "prefix", "key" or a range end
   * @param json JSON lines or protobuf frames
   */
  public WatchClient(String name, String key, String mode, boolean json) {
    this(name, key, mode, json ? Encoding.JSON : Encoding.PROTOBUF);
  }

  /**
   * @param name for messages
   * @param key the watched key (raw string, encoded here)
   * @param mode "prefix", "key" or a range end
   * @param encoding the frames asked for by {@code Accept}
   */
  public WatchClient(String name, String key, String mode, Encoding encoding) {
    this.name = name;
    this.encoding = encoding;
    String q = "key=" + enc(key) + "&allowWatchBookmarks=true";
    if (mode.equals("prefix")) {
      q += "&prefix=true";
    } else if (!mode.equals("key")) {
      q += "&rangeEnd=" + enc(mode);
    }
    this.query = q;
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }

  public String name() {
    return name;
  }

  public boolean json() {
    return encoding == Encoding.JSON;
  }

  public Encoding encoding() {
    return encoding;
  }

  /**
   * Opens the stream on {@code baseUrl} from {@code resourceVersion}.
   *
   * @return the HTTP status
   */
  public synchronized int connect(String baseUrl, long resourceVersion) throws IOException, InterruptedException {
    return connect(baseUrl, resourceVersion, -1);
  }

  /**
   * Reconnects as an EventSource does after a lost connection: the same URL (which still says
   * {@code resourceVersion=initialResourceVersion}) and {@code Last-Event-ID} with the last id
   * received, if any. Call {@link #trimToResumePoint} first.
   *
   * @return the HTTP status
   */
  public synchronized int reconnectAsEventSource(String baseUrl, long initialResourceVersion)
      throws IOException, InterruptedException {
    return connect(baseUrl, initialResourceVersion, lastEventId);
  }

  private int connect(String baseUrl, long resourceVersion, long lastId) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/watch?" + query
            + "&resourceVersion=" + resourceVersion))
        .header("Accept", encoding.mediaType()).GET();
    if (lastId >= 0) {
      b.header("Last-Event-ID", Long.toString(lastId));
    }
    HttpRequest request = b.build();
    HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
    if (response.statusCode() != 200) {
      response.body().close();
      return response.statusCode();
    }
    body = response.body();
    ended = false;
    Thread t = new Thread(() -> read(response.body()), "watch-" + name);
    t.setDaemon(true);
    reader = t;
    t.start();
    return 200;
  }

  private void read(InputStream in) {
    try {
      if (encoding == Encoding.JSON) {
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = lines.readLine()) != null) {
          WatchEvent.Builder b = WatchEvent.newBuilder();
          JsonFormat.parser().merge(line, b);
          add(b.build());
        }
      } else if (encoding == Encoding.SSE) {
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        StringBuilder block = new StringBuilder();
        String line;
        while ((line = lines.readLine()) != null) {
          if (!line.isEmpty()) {
            block.append(block.length() == 0 ? "" : "\n").append(line);
            continue;
          }
          if (block.toString().startsWith("retry: ")) {
            // The stream's reconnection delay: no event.
            block.setLength(0);
            continue;
          }
          Frames.SseEvent e = Frames.parseSse(block.toString());
          block.setLength(0);
          synchronized (frames) {
            frames.add(e.frame());
            if (e.id() != null) {
              lastEventId = Long.parseLong(e.id());
              framesAtLastId = frames.size();
            }
          }
        }
      } else {
        WatchEvent e;
        while ((e = WatchEvent.parseDelimitedFrom(in)) != null) {
          add(e);
        }
      }
    } catch (IOException e) {
      if (!closed) {
        // A node killed mid-stream: the caller reconnects.
      }
    } catch (RuntimeException e) {
      failure = e;
    } finally {
      ended = true;
    }
  }

  private void add(WatchEvent e) {
    synchronized (frames) {
      frames.add(e);
    }
  }

  /** True once the stream ended (node gone, timeout, error frame). */
  public boolean ended() {
    return ended;
  }

  /** A decoding failure, if any. */
  public Throwable failure() {
    return failure;
  }

  /** All frames received so far. */
  public List<WatchEvent> frames() {
    synchronized (frames) {
      return new ArrayList<>(frames);
    }
  }

  /** The resourceVersion of the newest frame, or -1. */
  public long lastResourceVersion() {
    synchronized (frames) {
      return frames.isEmpty() ? -1 : frames.get(frames.size() - 1).getResourceVersion();
    }
  }

  /**
   * Drops the frames of the last revision received unless it is known to be complete, and
   * returns the resourceVersion to resume from. A revision is complete once a bookmark or a
   * frame of a later revision followed it, or its frame with {@code index == count - 1}
   * arrived; after a cut the node sends the dropped revision again, whole.
   */
  public long trimToResumePoint(long initialResourceVersion) {
    synchronized (frames) {
      if (encoding == Encoding.SSE) {
        // Frames after the last id belong to a revision not received whole: the node sends it
        // again from the last id, so a client drops them (an EventSource app sees them twice).
        frames.subList(framesAtLastId, frames.size()).clear();
        return lastEventId >= 0 ? lastEventId : initialResourceVersion;
      }
      if (!frames.isEmpty()) {
        WatchEvent last = frames.get(frames.size() - 1);
        boolean complete = last.getType() == WatchEvent.Type.BOOKMARK || last.getIndex() == last.getCount() - 1;
        if (!complete) {
          long cut = last.getResourceVersion();
          while (!frames.isEmpty() && frames.get(frames.size() - 1).getResourceVersion() == cut
              && frames.get(frames.size() - 1).getType() != WatchEvent.Type.BOOKMARK) {
            frames.remove(frames.size() - 1);
          }
        }
      }
      return frames.isEmpty() ? initialResourceVersion : frames.get(frames.size() - 1).getResourceVersion();
    }
  }

  /** Waits for the reader thread to finish after the stream ended. */
  public void awaitReader() throws InterruptedException {
    Thread t = reader;
    if (t != null) {
      t.join(10_000);
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      InputStream in = body;
      if (in != null) {
        in.close();
      }
    } catch (IOException e) {
      // closing anyway
    }
  }
}

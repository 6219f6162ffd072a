package io.watchfanout.localstack;

import com.google.protobuf.util.JsonFormat;
import io.watchfanout.schema.v1.WatchEvent;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A watch client written against the README, over plain HTTP ({@code java.net.http}): streams
 * {@code GET /v1/watch} as JSON lines or delimited protobuf and, when its node goes away,
 * resumes on another node — from its last BOOKMARK, or from its last complete revision
 * (the README's rule: a revision is complete once a later frame followed it, or its frame has
 * {@code index == count - 1}). Frames after the resume point are dropped, since the new node
 * sends them again. Thread-safe.
 */
final class HttpWatch implements AutoCloseable {
  /** Where a resumed watch starts. */
  enum Resume {
    /** From the last BOOKMARK's resourceVersion. */
    LAST_BOOKMARK,
    /** From the last frame of a revision known to be complete. */
    LAST_COMPLETE_REVISION
  }

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  final String name;
  final String query;
  final boolean json;
  final Resume resume;
  final long initialResourceVersion;
  /** Frames kept (the ones after a resume point dropped), in order. */
  private final List<WatchEvent> frames = new ArrayList<>();
  private final List<String> connections = new ArrayList<>();
  private volatile InputStream body;
  private volatile boolean ended = true;
  private volatile Throwable failure;

  HttpWatch(String name, String query, boolean json, Resume resume, long initialResourceVersion) {
    this.name = name;
    this.query = query;
    this.json = json;
    this.resume = resume;
    this.initialResourceVersion = initialResourceVersion;
  }

  /** Opens the stream on {@code baseUrl} from {@code resourceVersion}; returns the HTTP status. */
  synchronized int connect(String baseUrl, long resourceVersion) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + "/v1/watch?" + query
            + "&allowWatchBookmarks=true&resourceVersion=" + resourceVersion))
        .header("Accept", json ? "application/json" : "application/x-protobuf").GET().build();
    HttpResponse<InputStream> response = HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
    if (response.statusCode() != 200) {
      response.body().close();
      return response.statusCode();
    }
    connections.add(baseUrl + " from " + resourceVersion);
    body = response.body();
    ended = false;
    Thread t = new Thread(() -> read(response.body()), "watch-" + name);
    t.setDaemon(true);
    t.start();
    return 200;
  }

  private void read(InputStream in) {
    try {
      if (json) {
        BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        while ((line = lines.readLine()) != null) {
          WatchEvent.Builder b = WatchEvent.newBuilder();
          JsonFormat.parser().merge(line, b);
          add(b.build());
        }
      } else {
        WatchEvent e;
        while ((e = WatchEvent.parseDelimitedFrom(in)) != null) {
          add(e);
        }
      }
    } catch (IOException e) {
      // the node went away mid-stream: the test resumes elsewhere
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

  boolean ended() {
    return ended;
  }

  Throwable failure() {
    return failure;
  }

  List<WatchEvent> frames() {
    synchronized (frames) {
      return new ArrayList<>(frames);
    }
  }

  List<String> connections() {
    return List.copyOf(connections);
  }

  /** The resourceVersion of the newest frame, or -1. */
  long lastResourceVersion() {
    synchronized (frames) {
      return frames.isEmpty() ? -1 : frames.get(frames.size() - 1).getResourceVersion();
    }
  }

  /** The resourceVersion of the newest BOOKMARK, or -1. */
  long lastBookmark() {
    synchronized (frames) {
      for (int i = frames.size() - 1; i >= 0; i--) {
        if (frames.get(i).getType() == WatchEvent.Type.BOOKMARK) {
          return frames.get(i).getResourceVersion();
        }
      }
      return -1;
    }
  }

  /**
   * After the stream ended: drops the frames after the resume point and returns it.
   */
  long trimToResumePoint() {
    synchronized (frames) {
      if (resume == Resume.LAST_BOOKMARK) {
        int last = frames.size() - 1;
        while (last >= 0 && frames.get(last).getType() != WatchEvent.Type.BOOKMARK) {
          last--;
        }
        frames.subList(last + 1, frames.size()).clear();
      } else if (!frames.isEmpty()) {
        WatchEvent last = frames.get(frames.size() - 1);
        boolean complete = last.getType() == WatchEvent.Type.BOOKMARK || last.getIndex() == last.getCount() - 1;
        if (!complete) {
          long cut = last.getResourceVersion();
          while (!frames.isEmpty() && frames.get(frames.size() - 1).getResourceVersion() == cut) {
            frames.remove(frames.size() - 1);
          }
        }
      }
      return frames.isEmpty() ? initialResourceVersion : frames.get(frames.size() - 1).getResourceVersion();
    }
  }

  @Override
  public void close() {
    InputStream in = body;
    if (in != null) {
      try {
        in.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }

  @Override
  public String toString() {
    return name + " (" + query + ", " + (json ? "JSON" : "protobuf") + ", resume " + resume + ")";
  }
}

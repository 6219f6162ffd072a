package io.watchfanout.fanout.http;

import io.watchfanout.fanout.cache.RecordApplier;
import io.watchfanout.fanout.cache.WatchCache;
import io.watchfanout.fanout.frame.FrameEncoder;
import io.watchfanout.fanout.metrics.NodeMetrics;
import io.watchfanout.fanout.testing.EtcdLog;
import io.watchfanout.fanout.watch.WatchHub;
import io.watchfanout.schema.v1.EventsRecord;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/** A node without Kafka: the HTTP API over a hub the test feeds with events-topic records. */
final class TestNode implements AutoCloseable {
  final EtcdLog etcd = new EtcdLog(100);
  final WatchHub hub;
  final HttpApi api;
  final RecordApplier applier;

  TestNode(int historyMaxEvents, int queueFrames, boolean ready) {
    this(historyMaxEvents, queueFrames, ready, Duration.ofSeconds(30));
  }

  /**
   * A node with one IO thread (a test can hold it to make frames wait) and 200 ms bookmarks.
   *
   * @param stalledCloseAfter how long an ended stream's client gets to take its last frames
   */
  TestNode(int historyMaxEvents, int queueFrames, boolean ready, Duration stalledCloseAfter) {
    hub = new WatchHub(new WatchCache(historyMaxEvents, Duration.ofMinutes(10), System::currentTimeMillis),
        new FrameEncoder(), queueFrames, "http-test");
    hub.startAt(100);
    if (ready) {
      hub.markReady();
    }
    applier = new RecordApplier(hub, 100);
    api = new HttpApi(hub, new HttpSettings(Duration.ofMillis(200), Duration.ofMillis(300), 1, "http-test",
        stalledCloseAfter), NodeMetrics.registry(hub, null), "127.0.0.1", 0, 1);
    api.start();
  }

  synchronized void feed(List<EventsRecord> records) {
    records.forEach(applier::accept);
  }

  synchronized void feed(EventsRecord record) {
    applier.accept(record);
  }

  URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + api.port() + pathAndQuery);
  }

  @Override
  public void close() {
    api.stop();
  }
}

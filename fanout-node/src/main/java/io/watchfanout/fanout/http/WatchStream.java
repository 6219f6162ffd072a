package io.watchfanout.fanout.http;

import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import io.watchfanout.fanout.watch.WatchSink;
import io.watchfanout.fanout.watch.WatchStats;
import io.watchfanout.fanout.watch.Watcher;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.xnio.IoUtils;
import org.xnio.XnioIoThread;
import org.xnio.channels.StreamSinkChannel;
import org.xnio.channels.StreamSourceChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP transport of one {@link Watcher}: non-blocking writes on the exchange's IO
 * thread, at most one write in flight, every waiting frame gathered into one write.
 *
 * <p>Why we frame the HTTP chunks ourselves: Undertow's {@code ChunkedStreamSinkConduit}
 * writes only the first buffer of a gathering write (one chunk and one syscall per frame),
 * which would waste the main throughput lever on loopback (docs/BENCHMARKS.md, "limit": ~16 frames per write
 * is ~10x the frame rate of one per write). So the response is marked non-persistent (Undertow
 * then passes bytes through), {@code Transfer-Encoding: chunked} is set by hand, and each
 * write is one chunk: {@code [size CRLF, frame 1..n, CRLF]} with the shared frames
 * {@code duplicate()}d, never copied. The connection closes after the stream, which a
 * watch connection does anyway in practice.
 *
 * <p>Ending: once the watcher is ending (an ERROR frame such as 410 Expired, timeoutSeconds,
 * shutdown), the client gets {@code stalledCloseAfter} to take the last frames; a client that
 * stopped reading (its socket full) has its connection closed then, counted in
 * {@link WatchStats#closedStalled()}, instead of holding it forever. A live or parked stream
 * whose client reads slowly is not subject to this bound: parking is the slow-watcher policy.
 *
 * <p>Thread-safety: everything except {@link #wakeUp()} runs on the exchange's IO thread.
 */
final class WatchStream implements WatchSink {
  private static final Logger LOG = LoggerFactory.getLogger(WatchStream.class);
  /** Frames gathered into one write at most (IOV_MAX is 1024; a chunk header and CRLF ride along). */
  static final int MAX_FRAMES_PER_WRITE = 64;
  private static final ByteBuffer CRLF = ByteBuffer.wrap("\r\n".getBytes(StandardCharsets.US_ASCII)).asReadOnlyBuffer();
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final ByteBuffer LAST_CHUNK = ByteBuffer.wrap("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).asReadOnlyBuffer();

  private final HttpServerExchange exchange;
  private final XnioIoThread io;
  private final WatchStats stats;
  private final Duration tickInterval;
  private final Duration stalledCloseAfter;
  private final String nodeId;
  private final IoThreadWakeUps wakeUps;
  private final AtomicBoolean wakePending = new AtomicBoolean();

  private Watcher watcher;
  private StreamSinkChannel channel;
  private final List<ByteBuffer> polled = new ArrayList<>(MAX_FRAMES_PER_WRITE);
  private final ByteBuffer[] pending = new ByteBuffer[MAX_FRAMES_PER_WRITE + 2];
  private final ByteBuffer chunkHeader = ByteBuffer.allocate(16);
  private int pendingFrom;
  private int pendingCount;
  private long pendingBytes;
  private boolean lastChunkQueued;
  private boolean closeTimerArmed;
  private boolean closed;

  WatchStream(HttpServerExchange exchange, IoThreadWakeUps.Registry wakeUps, WatchStats stats,
      Duration tickInterval, Duration stalledCloseAfter, String nodeId) {
    this.exchange = exchange;
    this.io = exchange.getIoThread();
    this.wakeUps = wakeUps.forThread(io);
    this.stats = stats;
    this.tickInterval = tickInterval;
    this.stalledCloseAfter = stalledCloseAfter;
    this.nodeId = nodeId;
  }

  /**
   * Starts streaming (IO thread): sends the 200 headers, starts the periodic tick and the
   * stream timeout, and pulls the first frames.
   */
  void start(Watcher w, long timeoutSeconds, String contentType) {
    this.watcher = w;
    exchange.setStatusCode(200);
    exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
    exchange.getResponseHeaders().put(Headers.CACHE_CONTROL, "no-cache");
    exchange.setPersistent(false);
    channel = exchange.getResponseChannel();
    exchange.getResponseHeaders().put(Headers.TRANSFER_ENCODING, Headers.CHUNKED.toString());
    channel.getWriteSetter().set(ch -> pump());
    exchange.addExchangeCompleteListener((ex, next) -> {
      abort(null);
      next.proceed();
    });
    watchForHangUp();
    scheduleTick();
    if (timeoutSeconds > 0) {
      io.executeAfter(() -> {
        if (!closed) {
          watcher.finish();
        }
      }, timeoutSeconds, TimeUnit.SECONDS);
    }
    pump();
  }

  /**
   * Notices a client that closed its connection even when no frame is due for a long time (a
   * quiet key without bookmarks): a watch request has no body, so the connection's read side is
   * idle until the client hangs up and it reads end-of-stream. Bytes a client sends after its
   * request (pipelining) are dropped: the connection closes after the stream anyway.
   */
  private void watchForHangUp() {
    StreamSourceChannel source = sourceChannel(exchange);
    if (source == null) {
      return;
    }
    ByteBuffer scratch = ByteBuffer.allocate(512);
    source.getReadSetter().set(ch -> {
      try {
        int n;
        do {
          scratch.clear();
          n = ch.read(scratch);
        } while (n > 0);
        if (n < 0) {
          abort(null);
        }
      } catch (IOException e) {
        abort(e);
      }
    });
    source.resumeReads();
  }

  /**
   * The connection's read side. Undertow keeps {@code ServerConnection.getSourceChannel()}
   * protected; it is the only handle on a GET's connection once its (empty) request body is
   * done, so it is opened once by reflection. Null, and no hang-up detection, if that fails.
   */
  private static StreamSourceChannel sourceChannel(HttpServerExchange exchange) {
    if (SOURCE_CHANNEL == null) {
      return null;
    }
    try {
      return (StreamSourceChannel) SOURCE_CHANNEL.invoke(exchange.getConnection());
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("no read side for {}: {}", exchange.getConnection(), e.toString());
      return null;
    }
  }

  private static final java.lang.reflect.Method SOURCE_CHANNEL = openSourceChannel();

  private static java.lang.reflect.Method openSourceChannel() {
    try {
      java.lang.reflect.Method m = io.undertow.server.ServerConnection.class.getDeclaredMethod("getSourceChannel");
      m.setAccessible(true);
      return m;
    } catch (ReflectiveOperationException | RuntimeException e) {
      LoggerFactory.getLogger(WatchStream.class).warn(
          "cannot open Undertow's connection read side ({}); watches of quiet keys without bookmarks "
              + "notice a client that hung up only at their next frame", e.toString());
      return null;
    }
  }

  private void scheduleTick() {
    io.executeAfter(() -> {
      if (!closed) {
        watcher.tick();
        scheduleTick();
      }
    }, tickInterval.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void wakeUp() {
    if (wakePending.compareAndSet(false, true)) {
      wakeUps.wake(this);
    }
  }

  /** The pump of a wake-up, run by {@link IoThreadWakeUps} on the IO thread. */
  void pumpWoken() {
    wakePending.set(false);
    pump();
  }

  /** Writes until the socket would block or nothing is waiting (IO thread). */
  private void pump() {
    if (closed || channel == null) {
      return;
    }
    if (!closeTimerArmed && watcher.isEnding()) {
      armCloseTimer();
    }
    try {
      while (true) {
        if (pendingBytes > 0) {
          long n = channel.write(pending, pendingFrom, pendingCount - pendingFrom);
          pendingBytes -= n;
          stats.addBytesSent(watcher.spec().encoding(), n);
          while (pendingFrom < pendingCount && !pending[pendingFrom].hasRemaining()) {
            pending[pendingFrom++] = null;
          }
          if (pendingBytes > 0) {
            channel.resumeWrites();
            return;
          }
        }
        if (!channel.flush()) {
          channel.resumeWrites();
          return;
        }
        if (lastChunkQueued) {
          finishExchange();
          return;
        }
        polled.clear();
        switch (watcher.poll(polled, MAX_FRAMES_PER_WRITE)) {
          case FRAMES:
            stage(polled);
            break;
          case END:
            stageLastChunk();
            break;
          case YIELD:
            channel.suspendWrites();
            wakeUp();
            return;
          case IDLE:
          default:
            channel.suspendWrites();
            return;
        }
      }
    } catch (IOException | RuntimeException e) {
      abort(e);
    }
  }

  /** The stream has ended: its client gets a bounded time to take the last frames. */
  private void armCloseTimer() {
    closeTimerArmed = true;
    io.executeAfter(() -> {
      if (!closed) {
        stats.addClosedStalled();
        LOG.info("[node {}] {} ended but its client took no last frames within {} ms; closing the connection",
            nodeId, watcher, stalledCloseAfter.toMillis());
        abort(null);
      }
    }, stalledCloseAfter.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void stage(List<ByteBuffer> frames) {
    long size = 0;
    pendingFrom = 0;
    pendingCount = 0;
    pending[pendingCount++] = chunkHeader;
    for (ByteBuffer f : frames) {
      ByteBuffer d = f.duplicate();
      size += d.remaining();
      pending[pendingCount++] = d;
    }
    chunkHeader.clear();
    for (int shift = (63 - Long.numberOfLeadingZeros(size | 1)) & ~3; shift >= 0; shift -= 4) {
      chunkHeader.put(HEX[(int) (size >>> shift) & 15]);
    }
    chunkHeader.put((byte) '\r').put((byte) '\n').flip();
    pending[pendingCount++] = CRLF.duplicate();
    pendingBytes = size + chunkHeader.remaining() + 2;
  }

  private void stageLastChunk() {
    pendingFrom = 0;
    pendingCount = 1;
    pending[0] = LAST_CHUNK.duplicate();
    pendingBytes = pending[0].remaining();
    lastChunkQueued = true;
  }

  private void finishExchange() {
    closed = true;
    watcher.close();
    try {
      channel.shutdownWrites();
      channel.flush();
    } catch (IOException e) {
      LOG.debug("[node {}] closing {}: {}", nodeId, watcher, e.toString());
    }
    exchange.endExchange();
  }

  /** The client went away or a write failed: drop the connection and the watcher. */
  private void abort(Throwable cause) {
    if (closed) {
      return;
    }
    closed = true;
    if (cause != null) {
      LOG.debug("[node {}] {} ended: {}", nodeId, watcher, cause.toString());
    }
    if (watcher != null) {
      watcher.close();
    }
    IoUtils.safeClose(exchange.getConnection());
  }
}

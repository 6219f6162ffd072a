package io.watchfanout.fanout.etcd;

import io.grpc.Attributes;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.watchfanout.fanout.watch.WakeUps;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.LoggerFactory;

/**
 * The threads that run the etcd API's Watch streams, each stream on one lane for its life, so that
 * a stream's state is confined to its lane's thread. The wake-ups of one lane's streams are
 * coalesced into one task, as the HTTP side does per IO thread: when an event matches 1,000
 * watchers, the feed thread hands each lane one task that pumps all of its woken streams.
 *
 * <p>A stream that came over the network runs on the event loop of its connection: the node gives
 * grpc its own event loops ({@link #serveOn}) and tags each connection, when grpc reports it ready
 * on its event loop, with that loop's lane. There grpc's transport buffer of each response is
 * allocated and freed by one thread (from its pool's thread cache, not its arenas' locks), and the
 * response reaches the channel's write queue without a hand-over to another thread and a wake-up
 * of the loop; the HTTP path serves its streams on its IO threads the same way. A stream without
 * a connection (the in-process calls of the JSON gateway) runs on one of a few lanes of its own
 * threads (round robin).
 *
 * <p>The threads are Netty's ({@link DefaultThreadFactory}), so that the buffers grpc allocates on
 * them come from a thread cache found without a {@code ThreadLocal} lookup.
 *
 * <p>Thread-safety: thread-safe.
 */
final class WatchLanes {
    /** A connection's lane: the event loop grpc serves it on. */
    private static final Attributes.Key<Lane> LANE = Attributes.Key.create("watchfanout-watch-lane");

    /**
     * Streams a lane pumps before it lets its thread run what the pumps queued: on an event loop,
     * grpc's flush of their responses (its write queue flushes every 128 writes), so that a slice's
     * transport buffers are written and back in the loop's cache before the next slice takes its
     * own, where one event for 1,250 streams of a connection held 1,250 buffers at once.
     */
    static final int PUMP_SLICE = 128;

    private final Lane[] lanes;
    private final AtomicInteger next = new AtomicInteger();
    /** Streams placed on a connection's event loop, and on an own lane (for tests). */
    private final AtomicInteger onLoops = new AtomicInteger();

    private final AtomicInteger onOwnLanes = new AtomicInteger();
    private final EventLoopGroup boss;
    private final EventLoopGroup loops;
    private final boolean epoll;
    /** Each event loop's lane: filled by the constructor, only read after (a final field's contents). */
    private final Map<EventExecutor, Lane> loopLanes = new IdentityHashMap<>();

    /**
     * @param name the threads' name prefix
     * @param count the number of lanes of calls without a connection, {@code >= 1}
     */
    WatchLanes(String name, int count) {
        DefaultThreadFactory threads = new DefaultThreadFactory(name, true);
        lanes = new Lane[count];
        for (int i = 0; i < count; i++) {
            lanes[i] = new Lane(Executors.newSingleThreadExecutor(threads), false);
        }
        epoll = Epoll.isAvailable();
        DefaultThreadFactory bossThread = new DefaultThreadFactory(name + "-accept", true);
        DefaultThreadFactory loopThreads = new DefaultThreadFactory(name + "-io", true);
        // 0: Netty's default, twice the processors, as grpc's own event loops.
        boss = epoll ? new EpollEventLoopGroup(1, bossThread) : new NioEventLoopGroup(1, bossThread);
        loops = epoll ? new EpollEventLoopGroup(0, loopThreads) : new NioEventLoopGroup(0, loopThreads);
        for (EventExecutor loop : loops) {
            loopLanes.put(loop, new Lane(loop, true));
        }
    }

    /**
     * Has {@code server} serve its connections on these lanes' event loops (epoll where Netty's
     * native transport loads, else NIO), and tag each connection with its loop's lane.
     */
    NettyServerBuilder serveOn(NettyServerBuilder server) {
        return server.bossEventLoopGroup(boss)
                .workerEventLoopGroup(loops)
                .channelType(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .addTransportFilter(new ServerTransportFilter() {
                    @Override
                    public Attributes transportReady(Attributes attributes) {
                        // grpc calls this on the connection's event loop.
                        Lane lane = laneOfCurrentLoop();
                        return lane == null
                                ? attributes
                                : attributes.toBuilder().set(LANE, lane).build();
                    }
                });
    }

    private Lane laneOfCurrentLoop() {
        for (Map.Entry<EventExecutor, Lane> e : loopLanes.entrySet()) {
            if (e.getKey().inEventLoop()) {
                return e.getValue();
            }
        }
        return null;
    }

    /** The lane of a new stream of a call with these attributes: its connection's, else the next own lane. */
    Lane of(Attributes call) {
        Lane lane = call.get(LANE);
        if (lane != null) {
            onLoops.incrementAndGet();
            return lane;
        }
        onOwnLanes.incrementAndGet();
        return lanes[Math.floorMod(next.getAndIncrement(), lanes.length)];
    }

    /** Streams placed so far on connections' event loops. */
    int streamsOnLoops() {
        return onLoops.get();
    }

    /** Streams placed so far on the own lanes. */
    int streamsOnOwnLanes() {
        return onOwnLanes.get();
    }

    /** Stops the threads; queued tasks are dropped. Call after the server has stopped. */
    void shutdownNow() {
        for (Lane l : lanes) {
            ((ExecutorService) l.thread).shutdownNow();
        }
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    /**
     * One lane: an executor that runs its tasks one at a time in submission order on one thread
     * (the streams' serial executor), and the coalesced wake-ups of its streams.
     */
    static final class Lane implements Executor {
        private final Executor thread;
        private final WakeUps<EtcdWatchStream> wakeUps;
        private final boolean copiesOnSend;
        /*
         * The frames a pump polls and the response object it refills belong to the lane, not to each
         * stream: its streams pump one at a time on its thread, and each response stores the newest
         * frames (young objects) into them. A stream's own list and response object live in the old
         * generation, where every such store dirties a card that G1 scans at the next young
         * collection: one or two cards per stream that got an event, thousands per collection.
         */
        private final List<ByteBuffer> polled = new ArrayList<>();
        private final WatchResponseBytes response;

        /**
         * @param thread one thread running one task at a time (a single-thread executor, an event loop)
         * @param copiesOnSend the lane is an event loop of grpc's Netty transport (see {@link #copiesOnSend})
         */
        private Lane(Executor thread, boolean copiesOnSend) {
            this.thread = thread;
            this.wakeUps = new WakeUps<>(thread, EtcdWatchStream::pumpWoken, PUMP_SLICE);
            this.copiesOnSend = copiesOnSend;
            this.response = copiesOnSend ? new WatchResponseBytes(new byte[0]) : null;
        }

        /**
         * True when the lane's streams are grpc's Netty streams, which copy a response into their
         * transport buffer before {@code onNext} returns, so that a stream may reuse one response
         * object; false for the in-process streams, whose transport hands the response object itself
         * to the reader on another thread.
         */
        boolean copiesOnSend() {
            return copiesOnSend;
        }

        @Override
        public void execute(Runnable task) {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LoggerFactory.getLogger(WatchLanes.class).error("an etcd API stream task failed", e);
                }
            });
        }

        /**
         * The lane's list for the frames a pump polls; each pump clears it before use, and it may
         * hold the last pump's frames until then. Only for the lane's thread, in a pump.
         */
        List<ByteBuffer> polled() {
            return polled;
        }

        /**
         * The lane's one response object for responses of events where {@link #copiesOnSend}, else
         * null. Only for the lane's thread, within a pump's {@code onNext}.
         */
        WatchResponseBytes response() {
            return response;
        }

        /** Queues {@code stream}'s pump on the lane; at most one such task is pending. */
        void wake(EtcdWatchStream stream) {
            wakeUps.wake(stream);
        }
    }
}

package io.watchfanout.fanout.etcd;

import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchRequest;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.watchfanout.fanout.security.AccessControl;
import io.watchfanout.fanout.watch.WatchCore;
import java.time.Duration;

/**
 * {@code etcdserverpb.Watch} served from the cache: etcd's method, with a response marshaller
 * that writes a response's own fields and the shared event frames ({@link WatchResponseBytes})
 * instead of serializing a message per watcher. Each call is an {@link EtcdWatchStream} on the lane
 * of its connection's event loop, or on one of the own lanes ({@link WatchLanes#of}). Stateless.
 */
final class EtcdWatchService {
    private EtcdWatchService() {}

    static ServerServiceDefinition definition(
            WatchCore core,
            EtcdHeaders headers,
            EtcdApiStats stats,
            WatchLanes lanes,
            Duration progressNotifyInterval,
            AccessControl access) {
        MethodDescriptor<WatchRequest, WatchResponseBytes> method = WatchGrpc.getWatchMethod().toBuilder(
                        ProtoUtils.marshaller(WatchRequest.getDefaultInstance()), WatchResponseBytes.MARSHALLER)
                .build();
        // The stream's lane comes from its call's connection, so the handler is made per call.
        ServerCallHandler<WatchRequest, WatchResponseBytes> handler = (call, metadata) ->
                ServerCalls.<WatchRequest, WatchResponseBytes>asyncBidiStreamingCall(responses -> new EtcdWatchStream(
                                core,
                                headers,
                                stats,
                                (ServerCallStreamObserver<WatchResponseBytes>) responses,
                                lanes.of(call.getAttributes()),
                                progressNotifyInterval,
                                access))
                        .startCall(call, metadata);
        return ServerServiceDefinition.builder(WatchGrpc.SERVICE_NAME)
                .addMethod(method, handler)
                .build();
    }
}

package io.watchfanout.fanout.etcd;

import io.grpc.BindableService;
import io.grpc.Channel;
import io.grpc.ManagedChannel;
import io.prometheus.client.CollectorRegistry;
import io.watchfanout.fanout.NodeConfig;
import io.watchfanout.fanout.watch.WatchHub;
import java.util.ArrayList;
import java.util.List;

/**
 * Assembles the etcd API of a node from its configuration: the services served from the cache,
 * the forwarder, the channel to etcd and the metrics. Stateless.
 */
public final class EtcdApis {
  private EtcdApis() {
  }

  /** The node's channel to {@code endpoints} (URLs), for forwarding and consistent reads. */
  public static ManagedChannel channel(List<String> endpoints) {
    return EtcdChannel.open(endpoints);
  }

  /**
   * The etcd API of a node, not started.
   *
   * @param etcd the channel to etcd, or null without {@code --etcd-endpoints}
   * @param registry where its metrics are registered
   */
  public static EtcdApi create(WatchHub hub, NodeConfig config, Channel etcd, CollectorRegistry registry) {
    EtcdApiStats stats = new EtcdApiStats();
    stats.register(registry);
    List<BindableService> services = new ArrayList<>();
    return new EtcdApi(config.bindAddress(), config.etcdApiPort(), config.nodeId(), services,
        new EtcdForwarder(etcd, stats.forwarded::increment));
  }
}

# etcd for the compose stack: Debian's etcd-server (and etcdctl from etcd-client, for the health
# check and for debugging), run as a non-root user. Build from the repository root:
#
#   docker build -f deploy/docker/etcd.Dockerfile -t watchfanout/etcd:local .
#
# BASE_IMAGE: a Debian image (the image of deploy/base-image without a container registry).
# The flags come from the command (docker-compose.yml gives them). Checked offline by
# deploy/validate and built and run by deploy/compose-test.
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends etcd-server etcd-client \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /var/lib/etcd \
      --shell /usr/sbin/nologin watchfanout \
 && mkdir -p /var/lib/etcd \
 && chown 10001:10001 /var/lib/etcd \
 && chmod 700 /var/lib/etcd
LABEL org.opencontainers.image.title="etcd (Debian's etcd-server) for watch-fanout" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

# etcdctl speaks the v3 API (etcd 3.4's default; spelled out).
ENV ETCDCTL_API=3
USER 10001:10001
WORKDIR /var/lib/etcd
EXPOSE 2379 2380
VOLUME ["/var/lib/etcd"]

HEALTHCHECK --interval=5s --timeout=5s --start-period=5s --retries=12 \
  CMD ["etcdctl", "--endpoints=http://127.0.0.1:2379", "endpoint", "health"]

STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/etcd"]
CMD ["--data-dir=/var/lib/etcd", "--listen-client-urls=http://0.0.0.0:2379", "--advertise-client-urls=http://127.0.0.1:2379"]

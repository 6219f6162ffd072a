# The load balancer of the compose stack: Debian's haproxy in front of the fan-out nodes, with
# deploy/docker/haproxy.cfg (one address for the nodes' HTTP port and one for their etcd API,
# nodes checked on /readyz), run as a non-root user. Build from the repository root:
#
#   docker build -f deploy/docker/haproxy.Dockerfile -t watchfanout/haproxy:local .
#
# BASE_IMAGE: a Debian image (the image of deploy/base-image without a container registry).
# Checked offline by deploy/validate and built and run by deploy/compose-test.
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends haproxy curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin watchfanout
COPY deploy/docker/haproxy.cfg /etc/haproxy/haproxy.cfg
LABEL org.opencontainers.image.title="HAProxy (Debian's haproxy) in front of watch-fanout's fan-out nodes" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

USER 10001:10001
WORKDIR /tmp
EXPOSE 8080 2379 8404

HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=12 \
  CMD ["curl", "-fsS", "-o", "/dev/null", "http://127.0.0.1:8404/healthz"]

# SIGUSR1: a soft stop (stop accepting, let the open streams end); docker stop's SIGKILL after
# the grace period ends the rest.
STOPSIGNAL SIGUSR1
ENTRYPOINT ["/usr/sbin/haproxy", "-db", "-f", "/etc/haproxy/haproxy.cfg"]

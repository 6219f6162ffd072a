# watch-fanout fan-out node: serves HTTP watch streams from a cache rebuilt from Kafka.
# Build from the repository root after building the shaded jar on the host:
#
#   mvn -B -DskipTests -pl fanout-node -am package
#   docker build -f deploy/docker/fanout-node.Dockerfile -t watchfanout/fanout-node:local .
#
# Base images (build arguments): JDK_IMAGE is where jlink runs (any image with a JDK 17, or a
# Debian/Ubuntu one, which gets openjdk-17-jdk-headless from its archive); BASE_IMAGE is the
# runtime's operating system (Debian or Ubuntu; curl is added for the health check). Without a
# container registry, pass the image of deploy/base-image for both:
#   docker build --build-arg JDK_IMAGE="$(deploy/base-image)" --build-arg BASE_IMAGE="$(deploy/base-image)" ...
# Every setting comes from WATCHFANOUT_* environment variables (README.md, "Command line"), e.g.
#   docker run -e WATCHFANOUT_KAFKA_BOOTSTRAP=kafka:9092 -e WATCHFANOUT_TOPIC_PREFIX=watch \
#     -p 8081:8080 watchfanout/fanout-node:local
# Checked offline by deploy/validate (a documented lint; hadolint is not installable here) and
# built and run by deploy/compose-test.
ARG JDK_IMAGE=eclipse-temurin:17-jdk-noble
ARG BASE_IMAGE=debian:bookworm-slim

# ---- jre stage: a Java runtime of only the modules the jars need (jlink) ----
FROM ${JDK_IMAGE} AS jre
# java.se (what jdeps finds in the shaded jars: java.sql, java.naming, java.desktop's beans, ...)
# plus the JDK modules netty, gRPC, TLS and the JMX metrics use.
# A Debian or Ubuntu image without a JDK gets its archive's, with binutils (Debian's jlink
# strips debug symbols with objcopy); the first RUN is the same in every Java image, so Docker
# caches it once. update-alternatives in the JDK's postinst needs /usr/share/man/man1, which
# slim images leave out.
RUN if ! command -v jlink >/dev/null; then \
      mkdir -p /usr/share/man/man1 && apt-get update \
      && apt-get install -y --no-install-recommends openjdk-17-jdk-headless binutils \
      && rm -rf /var/lib/apt/lists/*; \
    fi
RUN jlink --add-modules java.se,jdk.crypto.ec,jdk.management,jdk.net,jdk.unsupported,jdk.zipfs \
      --strip-debug --no-header-files --no-man-pages --compress=2 --output /opt/jre

# ---- runtime stage: the runtime, curl, a non-root user and the shaded jar, nothing else ----
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /app \
      --shell /usr/sbin/nologin watchfanout
COPY --from=jre /opt/jre /opt/jre
WORKDIR /app
COPY fanout-node/target/fanout-node.jar /app/fanout-node.jar
LABEL org.opencontainers.image.title="watch-fanout fan-out node" \
      org.opencontainers.image.description="Serves etcd and Kubernetes watch streams from a cache rebuilt from Kafka" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

# Container defaults: listen on every interface (the node's own default is 127.0.0.1) on 8080.
# WATCHFANOUT_KAFKA_BOOTSTRAP and WATCHFANOUT_TOPIC_PREFIX are required and have no default.
# JVM: heap sized from the container's memory limit, and exit (so the orchestrator restarts
# the container) rather than limp on after an OutOfMemoryError. MaxTenuringThreshold=1: what
# survives two young collections is old (the cache and the history live long; copying them
# between survivor spaces was most of a rebuild's collection cost, and promoting at once put
# every response in flight in the old generation). GCTimeRatio=4: the heap grows only when
# collections take more than a fifth of the time. TrimNativeHeapInterval=5000: freed C heap goes
# back to the system every 5 s (docs/DEPLOYMENT.md, "JVM"). Replace JAVA_TOOL_OPTIONS to change
# them.
ENV PATH=/opt/jre/bin:$PATH \
    WATCHFANOUT_PORT=8080 \
    WATCHFANOUT_BIND_ADDRESS=0.0.0.0 \
    JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError -XX:MaxTenuringThreshold=1 -XX:GCTimeRatio=4 -XX:TrimNativeHeapInterval=5000"

USER 10001:10001
EXPOSE 8080

# /readyz is 200 only once the cache has caught up with Kafka (503 while rebuilding and after
# SIGTERM). curl -f turns any non-2xx into a non-zero exit.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${WATCHFANOUT_PORT}/readyz" || exit 1

# SIGTERM starts the graceful drain (--shutdown-drain, default 5s): readiness fails, new watches
# are refused, open streams get a final BOOKMARK and end. Exit status 143 after a drain.
STOPSIGNAL SIGTERM
ENTRYPOINT ["java", "-jar", "/app/fanout-node.jar"]

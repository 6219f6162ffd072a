# watch-fanout ingester: watches etcd and publishes its changes to Kafka exactly once.
# Build from the repository root after building the shaded jar on the host:
#
#   mvn -B -DskipTests -pl ingester -am package
#   docker build -f deploy/docker/ingester.Dockerfile -t watchfanout/ingester:local .
#
# Base images: the build arguments JDK_IMAGE and BASE_IMAGE, as in fanout-node.Dockerfile.
# Every setting comes from WATCHFANOUT_* environment variables (README.md, "Command line"), e.g.
#   docker run -e WATCHFANOUT_ETCD_ENDPOINTS=http://etcd:2379 \
#     -e WATCHFANOUT_KAFKA_BOOTSTRAP=kafka:9092 -e WATCHFANOUT_TOPIC_PREFIX=watch \
#     watchfanout/ingester:local
# Checked offline by deploy/validate (a documented lint; hadolint is not installable here) and
# built and run by deploy/compose-test.
ARG JDK_IMAGE=eclipse-temurin:17-jdk-noble
ARG BASE_IMAGE=debian:bookworm-slim

# ---- jre stage: a Java runtime of only the modules the jars need (jlink) ----
FROM ${JDK_IMAGE} AS jre
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
COPY ingester/target/ingester.jar /app/ingester.jar
LABEL org.opencontainers.image.title="watch-fanout ingester" \
      org.opencontainers.image.description="Watches etcd and publishes its changes to Kafka exactly once" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

# Operations endpoints (/metrics, /readyz, /livez) on 9100 on every interface (the ingester's
# defaults, spelled out). WATCHFANOUT_KAFKA_BOOTSTRAP and WATCHFANOUT_TOPIC_PREFIX are required
# and have no default; so is WATCHFANOUT_ETCD_ENDPOINTS, except for a materializer process
# (WATCHFANOUT_PUBLISHER=false). The Kafka Streams state
# materializer keeps its state under java.io.tmpdir (/tmp), writable by the user below.
# JVM: heap sized from the container's memory limit, and exit rather than limp on after an
# OutOfMemoryError. Replace JAVA_TOOL_OPTIONS to change them.
ENV PATH=/opt/jre/bin:$PATH \
    WATCHFANOUT_HTTP_PORT=9100 \
    WATCHFANOUT_HTTP_HOST=0.0.0.0 \
    JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError"

USER 10001:10001
EXPOSE 9100

# /livez, not /readyz: with leader election a standby replica is healthy but not ready (it
# publishes nothing until it leads); it must not be reported unhealthy for that.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${WATCHFANOUT_HTTP_PORT}/livez" || exit 1

# SIGTERM: the ingester commits or aborts its open Kafka transaction and releases leadership.
STOPSIGNAL SIGTERM
ENTRYPOINT ["java", "-jar", "/app/ingester.jar"]

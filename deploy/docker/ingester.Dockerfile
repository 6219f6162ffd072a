# syntax=docker/dockerfile:1
#
# watch-fanout ingester: watches etcd and publishes its changes to Kafka exactly once.
# Build from the repository root (the build context is the whole Maven reactor):
#
#   docker build -f deploy/docker/ingester.Dockerfile -t watchfanout/ingester:local .
#
# Every setting comes from WATCHFANOUT_* environment variables (README.md, "Command line"), e.g.
#   docker run -e WATCHFANOUT_ETCD_ENDPOINTS=http://etcd:2379 \
#     -e WATCHFANOUT_KAFKA_BOOTSTRAP=kafka:9092 -e WATCHFANOUT_TOPIC_PREFIX=watch \
#     watchfanout/ingester:local
# Checked offline by deploy/validate (a documented lint; hadolint is not installable here).

# ---- build stage: only this runnable and the modules it needs (-pl ... -am) ----
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
# The cache mount keeps ~/.m2 between builds (BuildKit, the default builder of Docker 23+).
RUN --mount=type=cache,target=/root/.m2/repository \
    mvn -B --no-transfer-progress -pl ingester -am -DskipTests package

# ---- runtime stage: a JRE, a non-root user and the shaded jar, nothing else ----
# The Ubuntu (noble) variant of eclipse-temurin ships curl, which the HEALTHCHECK uses.
FROM eclipse-temurin:17-jre-noble
RUN groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /app \
      --shell /usr/sbin/nologin watchfanout
WORKDIR /app
COPY --from=build /src/ingester/target/ingester.jar /app/ingester.jar

# Operations endpoints (/metrics, /readyz, /livez) on 9100 on every interface (the ingester's
# defaults, spelled out). WATCHFANOUT_KAFKA_BOOTSTRAP and WATCHFANOUT_TOPIC_PREFIX are required
# and have no default; so is WATCHFANOUT_ETCD_ENDPOINTS, except for a materializer process
# (WATCHFANOUT_PUBLISHER=false). The Kafka Streams state
# materializer keeps its state under java.io.tmpdir (/tmp), writable by the user below.
# JVM: heap sized from the container's memory limit, and exit rather than limp on after an
# OutOfMemoryError. Replace JAVA_TOOL_OPTIONS to change them.
ENV WATCHFANOUT_HTTP_PORT=9100 \
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

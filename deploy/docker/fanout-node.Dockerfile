# syntax=docker/dockerfile:1
#
# watch-fanout fan-out node: serves HTTP watch streams from a cache rebuilt from Kafka.
# Build from the repository root (the build context is the whole Maven reactor):
#
#   docker build -f deploy/docker/fanout-node.Dockerfile -t watchfanout/fanout-node:local .
#
# Every setting comes from WATCHFANOUT_* environment variables (README.md, "Command line"), e.g.
#   docker run -e WATCHFANOUT_KAFKA_BOOTSTRAP=kafka:9092 -e WATCHFANOUT_TOPIC_PREFIX=watch \
#     -p 8081:8080 watchfanout/fanout-node:local
# Checked offline by deploy/validate (a documented lint; hadolint is not installable here).

# ---- build stage: only this runnable and the modules it needs (-pl ... -am) ----
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
# The cache mount keeps ~/.m2 between builds (BuildKit, the default builder of Docker 23+).
RUN --mount=type=cache,target=/root/.m2/repository \
    mvn -B --no-transfer-progress -pl fanout-node -am -DskipTests package

# ---- runtime stage: a JRE, a non-root user and the shaded jar, nothing else ----
# The Ubuntu (noble) variant of eclipse-temurin ships curl, which the HEALTHCHECK uses.
FROM eclipse-temurin:17-jre-noble
RUN groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /app \
      --shell /usr/sbin/nologin watchfanout
WORKDIR /app
COPY --from=build /src/fanout-node/target/fanout-node.jar /app/fanout-node.jar

# Container defaults: listen on every interface (the node's own default is 127.0.0.1) on 8080.
# WATCHFANOUT_KAFKA_BOOTSTRAP and WATCHFANOUT_TOPIC_PREFIX are required and have no default.
# JVM: heap sized from the container's memory limit, and exit (so the orchestrator restarts
# the container) rather than limp on after an OutOfMemoryError. MaxTenuringThreshold=0: what
# survives one young collection is old at once (the cache and the history live long; copying
# them between survivor spaces was most of a rebuild's collection cost: docs/BENCHMARKS.md,
# "rebuild"). Replace JAVA_TOOL_OPTIONS to change them.
ENV WATCHFANOUT_PORT=8080 \
    WATCHFANOUT_BIND_ADDRESS=0.0.0.0 \
    JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError -XX:MaxTenuringThreshold=0"

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

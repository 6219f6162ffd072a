# watch-fanout Kubernetes topics application: reads <prefix>.events and publishes the cluster's
# objects as Kubernetes watch events, a topic per resource (README.md, "Kubernetes objects on
# Kafka"). Build from the repository root after building the shaded jar on the host:
#
#   mvn -B -DskipTests -pl kube-kafka -am package
#   docker build -f deploy/docker/kube-topics.Dockerfile -t watchfanout/kube-topics:local .
#
# Base images: the build arguments JDK_IMAGE and BASE_IMAGE, as in fanout-node.Dockerfile.
# Every setting comes from WATCHFANOUT_* environment variables (`java -jar kube-topics.jar
# --help` lists the flags), e.g.
#   docker run -e WATCHFANOUT_KAFKA_BOOTSTRAP=kafka:9092 -e WATCHFANOUT_TOPIC_PREFIX=watch \
#     watchfanout/kube-topics:local
# Checked offline by deploy/validate and built and run by deploy/compose-test.
ARG JDK_IMAGE=eclipse-temurin:17-jdk-noble
ARG BASE_IMAGE=debian:bookworm-slim

# ---- jre stage: a Java runtime of only the modules the jars need (jlink) ----
FROM ${JDK_IMAGE} AS jre
# The same first RUN as the other Java images (cached once); see ingester.Dockerfile.
RUN if ! command -v jlink >/dev/null; then \
      mkdir -p /usr/share/man/man1 && apt-get update \
      && apt-get install -y --no-install-recommends openjdk-17-jdk-headless binutils \
      && rm -rf /var/lib/apt/lists/*; \
    fi
# jdk.httpserver: the application's /readyz and /metrics.
RUN jlink --add-modules java.se,jdk.crypto.ec,jdk.httpserver,jdk.management,jdk.net,jdk.unsupported,jdk.zipfs \
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
COPY kube-kafka/target/kube-topics.jar /app/kube-topics.jar
LABEL org.opencontainers.image.title="watch-fanout kube-topics" \
      org.opencontainers.image.description="Publishes the Kubernetes objects of the events topic as watch events, a Kafka topic per resource" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

# /readyz and /metrics on 8095 on every interface (the application's defaults, spelled out).
# WATCHFANOUT_KAFKA_BOOTSTRAP is required; WATCHFANOUT_TOPIC_PREFIX must be the ingester's. Kafka
# Streams keeps its state (the CRDs' store) under java.io.tmpdir (/tmp), writable by the user below.
# JVM: heap sized from the container's memory limit, and exit rather than limp on after an
# OutOfMemoryError. Replace JAVA_TOOL_OPTIONS to change them.
ENV PATH=/opt/jre/bin:$PATH \
    WATCHFANOUT_HTTP_PORT=8095 \
    WATCHFANOUT_HTTP_HOST=0.0.0.0 \
    JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError"

USER 10001:10001
EXPOSE 8095

# /readyz: 200 while Kafka Streams runs with its tasks assigned.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${WATCHFANOUT_HTTP_PORT}/readyz" || exit 1

# SIGTERM: Kafka Streams commits what it processed and leaves its group.
STOPSIGNAL SIGTERM
ENTRYPOINT ["java", "-jar", "/app/kube-topics.jar"]

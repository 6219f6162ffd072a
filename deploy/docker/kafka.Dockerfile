# A single-node Kafka broker (KRaft, broker and controller in one process) for the compose
# stack: the Kafka the project is built and tested with (kafka_2.13 and its dependencies, the
# class path of the local stack's broker), configured from KAFKA_* variables by
# kafka-entrypoint.sh. Build from the repository root after building the local stack:
#
#   mvn -B -DskipTests -pl local-stack -am package
#   docker build -f deploy/docker/kafka.Dockerfile -t watchfanout/kafka:local .
#
# Base images: the build arguments JDK_IMAGE and BASE_IMAGE, as in fanout-node.Dockerfile.
# Checked offline by deploy/validate and built and run by deploy/compose-test.
ARG JDK_IMAGE=eclipse-temurin:17-jdk-noble
ARG BASE_IMAGE=debian:bookworm-slim

# ---- jre stage: a Java runtime of only the modules the broker needs (jlink) ----
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

# ---- runtime stage: the runtime, a non-root user, Kafka's jars and the entry point ----
FROM ${BASE_IMAGE}
RUN groupadd --system --gid 10001 kafka \
 && useradd --system --uid 10001 --gid kafka --no-create-home --home-dir /opt/kafka \
      --shell /usr/sbin/nologin kafka \
 && mkdir -p /var/lib/kafka/data \
 && chown 10001:10001 /var/lib/kafka/data
COPY --from=jre /opt/jre /opt/jre
COPY local-stack/target/lib/ /opt/kafka/lib/
COPY deploy/docker/kafka-entrypoint.sh /opt/kafka/bin/kafka-entrypoint.sh
LABEL org.opencontainers.image.title="watch-fanout Kafka (single node, KRaft)" \
      org.opencontainers.image.description="The Kafka broker watch-fanout is built and tested with, for the compose stack" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

# JVM: half of the container's memory for the heap (the rest is page cache, which Kafka reads
# from), and exit rather than limp on after an OutOfMemoryError.
ENV PATH=/opt/jre/bin:$PATH \
    KAFKA_LOG_DIRS=/var/lib/kafka/data \
    JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=50.0 -XX:+ExitOnOutOfMemoryError"

USER 10001:10001
EXPOSE 9092 9093
VOLUME ["/var/lib/kafka/data"]

# Healthy once this start of the broker has logged "Kafka Server started" and its listener
# accepts connections (bash's /dev/tcp: the image has no Kafka client tools).
HEALTHCHECK --interval=5s --timeout=5s --start-period=20s --retries=12 \
  CMD ["bash", "-c", "grep -q 'Kafka Server started' /tmp/kafka/server.log && exec 3<>/dev/tcp/127.0.0.1/9092"]

STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/kafka/bin/kafka-entrypoint.sh"]

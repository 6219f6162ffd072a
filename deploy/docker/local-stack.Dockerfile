# watch-fanout demo load generator (the `loadgen` service of docker-compose.yml, profile
# `demo`): writes Kubernetes-like objects into etcd, as `bin/local-stack --demo` does.
# Build from the repository root after building the local stack on the host:
#
#   mvn -B -DskipTests -pl local-stack -am package
#   docker build -f deploy/docker/local-stack.Dockerfile -t watchfanout/local-stack:local .
#   docker run --rm watchfanout/local-stack:local --etcd-endpoints=http://etcd:2379
#
# Base images: the build arguments JDK_IMAGE and BASE_IMAGE, as in fanout-node.Dockerfile.
# Checked offline by deploy/validate (a documented lint; hadolint is not installable here).
ARG JDK_IMAGE=eclipse-temurin:17-jdk-noble
ARG BASE_IMAGE=debian:bookworm-slim

# ---- jre stage: a Java runtime of only the modules the jars need (jlink) ----
FROM ${JDK_IMAGE} AS jre
# As in fanout-node.Dockerfile (the same two RUNs, cached once).
RUN if ! command -v jlink >/dev/null; then \
      mkdir -p /usr/share/man/man1 && apt-get update \
      && apt-get install -y --no-install-recommends openjdk-17-jdk-headless binutils \
      && rm -rf /var/lib/apt/lists/*; \
    fi
RUN jlink --add-modules java.se,jdk.crypto.ec,jdk.management,jdk.net,jdk.unsupported,jdk.zipfs \
      --strip-debug --no-header-files --no-man-pages --compress=2 --output /opt/jre

# ---- runtime stage: the runtime, a non-root user, the thin jar and its lib/ ----
# local-stack.jar is not shaded (its manifest Class-Path names lib/*.jar), so lib/ comes along.
FROM ${BASE_IMAGE}
RUN groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /app \
      --shell /usr/sbin/nologin watchfanout
COPY --from=jre /opt/jre /opt/jre
WORKDIR /app
COPY local-stack/target/lib/ /app/lib/
COPY local-stack/target/local-stack.jar /app/local-stack.jar
LABEL org.opencontainers.image.title="watch-fanout demo load generator" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/watch-fanout/watch-fanout"

ENV PATH=/opt/jre/bin:$PATH \
    JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError"
USER 10001:10001

# A client of etcd only: no port, nothing to probe.
HEALTHCHECK NONE

# Entry point of the load generator alone (without the rest of the local stack): the main class
# io.watchfanout.localstack.demo.DemoLoadMain with --etcd-endpoints=URL and --demo-rate=N
# (writes per second). -cp follows the jar's manifest Class-Path to lib/.
STOPSIGNAL SIGTERM
ENTRYPOINT ["java", "-cp", "/app/local-stack.jar", "io.watchfanout.localstack.demo.DemoLoadMain"]
CMD ["--etcd-endpoints=http://etcd:2379", "--demo-rate=20"]

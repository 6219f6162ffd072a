# syntax=docker/dockerfile:1
#
# watch-fanout demo load generator (the `loadgen` service of docker-compose.yml, profile
# `demo`): writes Kubernetes-like objects into etcd, as `bin/local-stack --demo` does.
# Build from the repository root:
#
#   docker build -f deploy/docker/local-stack.Dockerfile -t watchfanout/local-stack:local .
#   docker run --rm watchfanout/local-stack:local --etcd-endpoints=http://etcd:2379
#
# Checked offline by deploy/validate (a documented lint; hadolint is not installable here).

# ---- build stage: the local-stack module and the modules it needs (-pl ... -am) ----
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
# The cache mount keeps ~/.m2 between builds (BuildKit, the default builder of Docker 23+).
RUN --mount=type=cache,target=/root/.m2/repository \
    mvn -B --no-transfer-progress -pl local-stack -am -DskipTests package

# ---- runtime stage: a JRE, a non-root user, the thin jar and its lib/ ----
# local-stack.jar is not shaded (its manifest Class-Path names lib/*.jar), so lib/ comes along.
FROM eclipse-temurin:17-jre-noble
RUN groupadd --system --gid 10001 watchfanout \
 && useradd --system --uid 10001 --gid watchfanout --no-create-home --home-dir /app \
      --shell /usr/sbin/nologin watchfanout
WORKDIR /app
COPY --from=build /src/local-stack/target/lib/ /app/lib/
COPY --from=build /src/local-stack/target/local-stack.jar /app/local-stack.jar

ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75.0 -XX:+ExitOnOutOfMemoryError"
USER 10001:10001

# A client of etcd only: no port, nothing to probe.
HEALTHCHECK NONE

# Entry point of the load generator alone (without the rest of the local stack): the main class
# io.watchfanout.localstack.demo.DemoLoadMain with --etcd-endpoints=URL and --demo-rate=N
# (writes per second). -cp follows the jar's manifest Class-Path to lib/.
STOPSIGNAL SIGTERM
ENTRYPOINT ["java", "-cp", "/app/local-stack.jar", "io.watchfanout.localstack.demo.DemoLoadMain"]
CMD ["--etcd-endpoints=http://etcd:2379", "--demo-rate=20"]

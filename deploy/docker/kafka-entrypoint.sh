#!/bin/bash
# Entry point of watch-fanout's Kafka image (kafka.Dockerfile): a single-node KRaft broker
# configured from the environment, in the manner of the apache/kafka image. Every KAFKA_<NAME>
# variable becomes the broker property <name> (lower case, "_" -> ".", "__" -> "_",
# "___" -> "-"), e.g. KAFKA_NODE_ID=1 -> node.id=1; CLUSTER_ID is the cluster id the storage is
# formatted with on first start (when log.dirs holds no meta.properties yet).
#
# The broker logs INFO to stdout and to $KAFKA_RUN_DIR/server.log, which is emptied at every
# start: the image's health check looks there for "Kafka Server started".
set -euo pipefail

run="${KAFKA_RUN_DIR:-/tmp/kafka}"
lib=/opt/kafka/lib
mkdir -p "$run"
: >"$run/server.log"

props="$run/server.properties"
: >"$props"
for var in $(compgen -e); do
  case "$var" in
    KAFKA_RUN_DIR) continue ;;
    KAFKA_*) ;;
    *) continue ;;
  esac
  name="${var#KAFKA_}"
  name="${name,,}"
  name="${name//___/-}"
  name="${name//__/@}"
  name="${name//_/.}"
  name="${name//@/_}"
  printf '%s=%s\n' "$name" "${!var}" >>"$props"
done
grep -q '^log\.dirs=' "$props" || echo "log.dirs=/var/lib/kafka/data" >>"$props"
log_dir="$(sed -n 's/^log\.dirs=//p' "$props" | cut -d, -f1)"

cat >"$run/logback.xml" <<'XML'
<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>[%d{ISO8601}] %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>${KAFKA_RUN_DIR:-/tmp/kafka}/server.log</file>
    <append>true</append>
    <encoder><pattern>[%d{ISO8601}] %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.kafka" level="INFO"/>
  <logger name="kafka" level="INFO"/>
  <root level="INFO"><appender-ref ref="STDOUT"/><appender-ref ref="FILE"/></root>
</configuration>
XML
printf 'status = warn\nrootLogger.level = warn\n' >"$run/log4j2.properties"

jvm=(-Djava.awt.headless=true "-Dlogback.configurationFile=$run/logback.xml" "-Dlog4j2.configurationFile=$run/log4j2.properties" -cp "$lib/*")

if [ ! -f "$log_dir/meta.properties" ]; then
  : "${CLUSTER_ID:?CLUSTER_ID (the KRaft cluster id, 22 characters of base64) is needed to format $log_dir}"
  echo "kafka-entrypoint: formatting $log_dir for cluster $CLUSTER_ID"
  java "${jvm[@]}" kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$props" --ignore-formatted
fi
exec java "${jvm[@]}" kafka.Kafka "$props"

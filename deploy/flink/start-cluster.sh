#!/usr/bin/env bash
# Starts a Flink session cluster on this machine from Maven-resolved jars: one JobManager and N
# TaskManagers, each its own JVM, bound to 127.0.0.1, with config, logs, temporary files and
# PIDs under DIR. Waits until all TaskManagers have registered, then prints the address to give
# beamsave: -- --runner=FlinkRunner --flinkMaster=127.0.0.1:REST_PORT --parallelism=SLOTS.
#
# usage: deploy/flink/start-cluster.sh DIR [TASKMANAGERS] [REST_PORT]
#   TASKMANAGERS defaults to 2, REST_PORT to 8081. Each TaskManager has 2 slots.
# Environment: FLINK_TM_MEMORY (default 1728m), FLINK_JM_MEMORY (default 1024m),
# FLINK_PROM_PORTS (Prometheus metrics, one port each process, default 9249-9259); the
# TaskManagers inherit this environment, so set AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or
# AWS_PROFILE) here for jobs that read or write s3:// images. BEAMSAVE_JAR puts that beamsave
# jar on the cluster's classpath: jobs submitted with `-- --jarOnCluster` then ship no jar, and
# its classes stay loaded and compiled from one job to the next.
set -euo pipefail
dir=$(realpath -m "${1:?usage: start-cluster.sh DIR [TASKMANAGERS] [REST_PORT]}")
taskmanagers=${2:-2}
rest_port=${3:-8081}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ -f "$dir/pids" ] && xargs -r kill -0 <"$dir/pids" 2>/dev/null; then
  echo "start-cluster: a cluster is already running from $dir (stop it with stop-cluster.sh $dir)" >&2
  exit 1
fi
mkdir -p "$dir/conf" "$dir/log" "$dir/tmp" "$dir/web"
rm -f "$dir/pids"

# The classpath: resolved once per Flink version, then reused.
if [ ! -s "$dir/classpath" ] || [ "$here/pom.xml" -nt "$dir/classpath" ]; then
  echo "start-cluster: resolving the Flink jars..." >&2
  mvn -q -B -f "$here/pom.xml" dependency:build-classpath -Dmdep.outputFile="$dir/classpath" >&2
fi
cp=$(cat "$dir/classpath")
rm -f "$dir/extra-classpath"
if [ -n "${BEAMSAVE_JAR:-}" ]; then
  [ -f "$BEAMSAVE_JAR" ] || { echo "start-cluster: BEAMSAVE_JAR $BEAMSAVE_JAR: no such file" >&2; exit 1; }
  cp="$cp:$(realpath "$BEAMSAVE_JAR")"
  # add-taskmanager.sh starts further TaskManagers with the same jar.
  realpath "$BEAMSAVE_JAR" >"$dir/extra-classpath"
fi

cat >"$dir/conf/config.yaml" <<YAML
jobmanager.rpc.address: 127.0.0.1
jobmanager.bind-host: 127.0.0.1
jobmanager.memory.process.size: ${FLINK_JM_MEMORY:-1024m}
taskmanager.bind-host: 127.0.0.1
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: 2
taskmanager.memory.process.size: ${FLINK_TM_MEMORY:-1728m}
taskmanager.memory.network.min: 256m
taskmanager.memory.network.max: 256m
rest.address: 127.0.0.1
rest.bind-address: 127.0.0.1
rest.port: $rest_port
cluster.evenly-spread-out-slots: true
metrics.fetcher.update-interval: 1000
parallelism.default: $((2 * taskmanagers))
# A lost TaskManager fails the running job; Flink then runs it again on the TaskManagers left.
# The attempts must outlast the heartbeat timeout that declares the lost one dead: 5 attempts
# 2 s apart ran out first; 10 attempts 5 s apart with a 10 s timeout restarted an 800 MiB save
# once and finished it (beamsave's shards are safe to write twice).
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 10
restart-strategy.fixed-delay.delay: 5 s
heartbeat.interval: 2000
heartbeat.timeout: 10000
# Prometheus metrics of each process (JobManager first) on the first free port of the range.
metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory
metrics.reporter.prom.port: ${FLINK_PROM_PORTS:-9249-9259}
metrics.reporter.prom.host: 127.0.0.1
io.tmp.dirs: $dir/tmp
web.tmpdir: $dir/web
web.upload.dir: $dir/web
YAML
cat >"$dir/conf/log4j.properties" <<'LOG4J'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = true
appender.main.fileName = ${sys:log.file}
appender.main.layout.type = PatternLayout
appender.main.layout.pattern = %d{yyyy-MM-dd HH:mm:ss,SSS} %-5p %-60c %x - %m%n
LOG4J

# shellcheck source=deploy/flink/processes.sh
. "$here/processes.sh"

start jobmanager org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
  GET_JM_RESOURCE_PARAMS --executionMode cluster
for i in $(seq 1 "$taskmanagers"); do
  start "taskmanager-$i" org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
    GET_TM_RESOURCE_PARAMS
done

# Ready when every TaskManager has registered with the JobManager.
for _ in $(seq 1 180); do
  registered=$( (curl -fsS "http://127.0.0.1:$rest_port/overview" 2>/dev/null || true) \
    | sed -n 's/.*"taskmanagers":\([0-9]*\).*/\1/p')
  if [ "${registered:-0}" -ge "$taskmanagers" ]; then
    echo "Flink session cluster up: 1 JobManager, $taskmanagers TaskManagers, REST and job" \
      "submission at 127.0.0.1:$rest_port (logs in $dir/log)"
    exit 0
  fi
  if ! xargs -r kill -0 <"$dir/pids" 2>/dev/null; then
    echo "start-cluster: a Flink process exited; see $dir/log" >&2
    "$here/stop-cluster.sh" "$dir" >/dev/null 2>&1 || true
    exit 1
  fi
  sleep 1
done
echo "start-cluster: only ${registered:-0} of $taskmanagers TaskManagers registered in 180 s; see $dir/log" >&2
"$here/stop-cluster.sh" "$dir" >/dev/null 2>&1 || true
exit 1

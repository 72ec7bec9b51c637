#!/usr/bin/env bash
# Starts a Flink session cluster on this machine: one JobManager and N TaskManagers, each its
# own JVM, bound to 127.0.0.1, with config, logs, temporary files and PIDs under DIR. The Flink
# jars come from the release's cluster/flink-LINE/ (beamsave-flink-cluster-VERSION.tar.gz,
# unpacked over the release), from a build's deploy/flink/target/flink-LINE/, or else are
# resolved with Maven (this directory's pom.xml). Waits until all TaskManagers have registered, then prints the address to give
# beamsave: -- --runner=FlinkRunner --flinkMaster=127.0.0.1:REST_PORT --parallelism=SLOTS.
#
# usage: deploy/flink/start-cluster.sh DIR [TASKMANAGERS] [REST_PORT]
#   TASKMANAGERS defaults to 2, REST_PORT to 8081. Each TaskManager has 2 slots.
# Environment: FLINK_VERSION (default: the version beamsave is built for, shown by
# `deploy/flink/start-cluster.sh --version`); FLINK_TM_MEMORY (default 1728m), FLINK_JM_MEMORY (default 1024m),
# FLINK_PROM_PORTS (Prometheus metrics, one port each process, default 9249-9259); the
# TaskManagers inherit this environment, so set AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or
# AWS_PROFILE) here for jobs that read or write s3:// images. BEAMSAVE_JAR puts that beamsave
# jar, and the Beam runner of the cluster's line beside it (flink-LINE/), on the cluster's
# classpath: jobs submitted with `-- --jarOnCluster` then ship no jar, and its classes stay
# loaded and compiled from one job to the next.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The Flink version this beamsave is built for: the one the release's cluster jars are of, or
# in a clone the build's.
built=$( (ls "$here"/../../cluster/flink-*/flink-runtime-*.jar 2>/dev/null || true) | head -n 1 \
  | sed -n 's:.*/flink-runtime-\(.*\)\.jar$:\1:p')
[ -n "$built" ] || built=$(sed -n 's:.*<flink.version>\(.*\)</flink.version>.*:\1:p' \
  "$here/../../pom.xml" 2>/dev/null | head -n 1)
if [ "${1:-}" = --version ]; then
  echo "$built"
  exit 0
fi
dir=$(realpath -m "${1:?usage: start-cluster.sh DIR [TASKMANAGERS] [REST_PORT]}")
taskmanagers=${2:-2}
rest_port=${3:-8081}
version=${FLINK_VERSION:-$built}
line=$(sed -n 's/^\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' <<<"$version")
[ -n "$line" ] || { echo "start-cluster: FLINK_VERSION=$version is not a Flink version (such as $built)" >&2; exit 1; }

if [ -f "$dir/pids" ] && xargs -r kill -0 <"$dir/pids" 2>/dev/null; then
  echo "start-cluster: a cluster is already running from $dir (stop it with stop-cluster.sh $dir)" >&2
  exit 1
fi
mkdir -p "$dir/conf" "$dir/log" "$dir/tmp" "$dir/web"
rm -f "$dir/pids"

# The classpath: the jars shipped for this version, or resolved once per version and reused.
shipped=""
for jars in "$here/../../cluster/flink-$line" "$here/target/flink-$line"; do
  if [ -f "$jars/flink-runtime-$version.jar" ]; then
    shipped=$(cd "$jars" && pwd)
    break
  fi
done
if [ -n "$shipped" ]; then
  ls "$shipped"/*.jar | tr '\n' ':' | sed 's/:$//' >"$dir/classpath"
elif [ ! -f "$here/../../pom.xml" ] || ! command -v mvn >/dev/null; then
  have=$( (ls "$here"/../../cluster/flink-*/flink-runtime-*.jar 2>/dev/null || true) \
    | sed -n 's:.*/flink-runtime-\(.*\)\.jar$:\1:p' | tr '\n' ' ')
  if [ -n "$have" ]; then
    echo "start-cluster: no jars of Flink $version here: the release carries Flink ${have% }" \
      "(unset FLINK_VERSION, or run this from a clone with Maven for another version)" >&2
  else
    echo "start-cluster: no jars of Flink $version here: unpack beamsave-flink-cluster-*.tar.gz" \
      "over the release (it adds cluster/flink-$line/), or run this from a clone with Maven" >&2
  fi
  exit 1
elif [ ! -s "$dir/classpath" ] || [ "$here/pom.xml" -nt "$dir/classpath" ] \
    || [ "$(cat "$dir/flink-version" 2>/dev/null)" != "$version" ]; then
  echo "start-cluster: resolving the jars of Flink $version..." >&2
  mvn -q -B -f "$here/pom.xml" dependency:build-classpath -Dflink.cluster.version="$version" \
    -Dmdep.outputFile="$dir/classpath" >&2
fi
echo "$version" >"$dir/flink-version"
cp=$(cat "$dir/classpath")
rm -f "$dir/extra-classpath"
if [ -n "${BEAMSAVE_JAR:-}" ]; then
  [ -f "$BEAMSAVE_JAR" ] || { echo "start-cluster: BEAMSAVE_JAR $BEAMSAVE_JAR: no such file" >&2; exit 1; }
  runner="$(dirname "$(realpath "$BEAMSAVE_JAR")")/flink-$line"
  [ -d "$runner" ] || { echo "start-cluster: no Beam runner for Flink $line beside $BEAMSAVE_JAR ($runner)" >&2; exit 1; }
  # The jar and the runner's jars that are not Flink's own (the cluster has those already);
  # add-taskmanager.sh starts further TaskManagers with the same.
  { realpath "$BEAMSAVE_JAR"; ls "$runner"/*.jar | grep -v '/flink-[^/]*$'; } | tr '\n' ':' \
    | sed 's/:$//' >"$dir/extra-classpath"
  cp="$cp:$(cat "$dir/extra-classpath")"
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
  registered=$(rest_get /overview | sed -n 's/.*"taskmanagers":\([0-9]*\).*/\1/p')
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

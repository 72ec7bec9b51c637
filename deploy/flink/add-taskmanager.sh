#!/usr/bin/env bash
# Starts one more TaskManager for the session cluster start-cluster.sh started from DIR, with
# the same configuration and classpath: how a lost TaskManager is replaced. Waits until the
# JobManager counts it.
# usage: deploy/flink/add-taskmanager.sh DIR
set -euo pipefail
dir=$(realpath -m "${1:?usage: add-taskmanager.sh DIR}")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ -f "$dir/pids" ] && [ -s "$dir/classpath" ] || {
  echo "add-taskmanager: no cluster started from $dir" >&2
  exit 1
}
cp=$(cat "$dir/classpath")
[ -f "$dir/extra-classpath" ] && cp="$cp:$(cat "$dir/extra-classpath")"
rest_port=$(sed -n 's/^rest.port: *//p' "$dir/conf/config.yaml")
# shellcheck source=deploy/flink/processes.sh
. "$here/processes.sh"
overview() { rest_get /overview | sed -n 's/.*"taskmanagers":\([0-9]*\).*/\1/p'; }
before=$(overview)
n=$(($(ls "$dir"/log/taskmanager-*.log 2>/dev/null | wc -l) + 1))
start "taskmanager-$n" org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
  GET_TM_RESOURCE_PARAMS
for _ in $(seq 1 120); do
  if [ "$(overview)" -gt "${before:-0}" ] 2>/dev/null; then
    echo "TaskManager taskmanager-$n registered (logs in $dir/log)"
    exit 0
  fi
  sleep 1
done
echo "add-taskmanager: taskmanager-$n did not register in 120 s; see $dir/log" >&2
exit 1

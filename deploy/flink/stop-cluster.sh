#!/usr/bin/env bash
# Stops the Flink session cluster that start-cluster.sh started from DIR, by the PIDs it
# recorded (never by process name), waiting up to 30 s before killing what is left.
# usage: deploy/flink/stop-cluster.sh DIR
set -euo pipefail
dir=$(realpath -m "${1:?usage: stop-cluster.sh DIR}")
[ -f "$dir/pids" ] || { echo "stop-cluster: no cluster recorded in $dir" >&2; exit 0; }
mapfile -t pids <"$dir/pids"
kill "${pids[@]}" 2>/dev/null || true
for _ in $(seq 1 30); do
  alive=0
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && break
  sleep 1
done
kill -9 "${pids[@]}" 2>/dev/null || true
rm -f "$dir/pids"
echo "Flink session cluster in $dir stopped"

#!/usr/bin/env bash
# Saves LIBRARY (about 1 GiB is the intended size) with the DirectRunner and on a Flink session
# cluster of 2 TaskManagers on loopback (deploy/flink/start-cluster.sh), in turn, after one
# warm-up run of each, and prints per-run wall times, medians and the cluster's ratio. The
# cluster runs two ways: with beamsave's jar already on the cluster's classpath (-- --jarOnCluster),
# alternating with the DirectRunner and with Beam's DataStream translation of batch jobs
# (--useDataStreamForBatch, what Flink 2 requires), then with the job's jar shipped on every
# submission (Flink's default). It prints the Flink version the cluster reports.
# usage: bench/flink-vs-direct.sh LIBRARY [RUNS]      (RUNS defaults to 3)
# BENCH_WORK picks the scratch directory (images and the cluster's files; removed at the end).
set -euo pipefail
library=$(realpath "${1:?usage: bench/flink-vs-direct.sh LIBRARY [RUNS]}")
runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-flink-bench.XXXXXX")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
trap '"$here/deploy/flink/stop-cluster.sh" "$work/flink" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
[ -f "$here/pipelines/target/beamsave.jar" ] || (cd "$here" && mvn -q -B package -DskipTests)
BEAMSAVE_JAR="$here/pipelines/target/beamsave.jar" \
  "$here/deploy/flink/start-cluster.sh" "$work/flink" 2 "$port" >&2

run_direct() {
  rm -f "$work/direct.bsave"; sync
  seconds "$here/beamsave" save --library "$library" --image "$work/direct.bsave" --quiet
}
# One subtask per core, as the DirectRunner has one worker thread per core: the cluster's 4
# slots share this machine's cores, and 4 subtasks only contend for them.
run_flink() { # extra Beam options...
  rm -f "$work/flink.bsave"; sync
  seconds "$here/beamsave" save --library "$library" --image "$work/flink.bsave" --quiet \
    -- --runner=FlinkRunner --flinkMaster="127.0.0.1:$port" --parallelism="$(nproc)" "$@"
}

# The two modes do not alternate on one cluster: the shipped jar's classes, loaded anew by every
# job, would burden the TaskManagers during the other mode's runs, which no real cluster (it has
# the jar or it does not) sees. The DirectRunner alternates with the preinstalled mode first.
echo "warm-up..." >&2
run_direct >/dev/null; run_flink --jarOnCluster >/dev/null
run_flink --jarOnCluster --useDataStreamForBatch=true >/dev/null
printf '%-4s %12s %18s %18s\n' run "direct s" "flink on-cluster s" "datastream s"
: >"$work/direct.times"; : >"$work/oncluster.times"; : >"$work/shipped.times"
: >"$work/datastream.times"
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) = 1 ]; then d=$(run_direct); c=$(run_flink --jarOnCluster)
    s=$(run_flink --jarOnCluster --useDataStreamForBatch=true)
  else s=$(run_flink --jarOnCluster --useDataStreamForBatch=true); c=$(run_flink --jarOnCluster)
    d=$(run_direct); fi
  echo "$d" >>"$work/direct.times"; echo "$c" >>"$work/oncluster.times"
  echo "$s" >>"$work/datastream.times"
  printf '%-4s %12s %18s %18s\n' "$i" "$d" "$c" "$s"
done
echo "then the jar shipped with each job (Flink's default)..." >&2
run_flink >/dev/null
for i in $(seq 1 "$runs"); do
  f=$(run_flink); echo "$f" >>"$work/shipped.times"
  printf '%-4s %12s %18s %16s\n' "$i" "" "" "shipped: $f"
done
md=$(median <"$work/direct.times"); mf=$(median <"$work/shipped.times"); mc=$(median <"$work/oncluster.times")
ms=$(median <"$work/datastream.times")
version=$(curl -fsS "http://127.0.0.1:$port/config" | sed -n 's/.*"flink-version":"\([^"]*\)".*/\1/p')
echo
printf 'library: %s (%s); medians of %d runs after a warm-up; Flink %s\n' "$library" \
  "$(du -sh "$library" | cut -f1)" "$runs" "$version"
printf '%-52s %8s s\n' "DirectRunner" "$md" \
  "Flink, 2 TaskManagers, jar on the cluster" "$mc" \
  "  the same, DataStream translation" "$ms" \
  "Flink, 2 TaskManagers, jar shipped with each job" "$mf"
awk -v d="$md" -v f="$mf" -v c="$mc" 'BEGIN {
  printf "cluster / direct: %.2fx with the jar on the cluster (target: at most 1.3x), %.2fx with it shipped\n", c / d, f / d }'

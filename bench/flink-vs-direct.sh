#!/usr/bin/env bash
# Saves LIBRARY (about 1 GiB is the intended size) with the DirectRunner and on a Flink session
# cluster of 2 TaskManagers on loopback (deploy/flink/start-cluster.sh), alternately, after one
# warm-up run of each, and prints per-run wall times, medians and the cluster's ratio.
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
"$here/deploy/flink/start-cluster.sh" "$work/flink" 2 "$port" >&2
[ -f "$here/pipelines/target/beamsave.jar" ] || (cd "$here" && mvn -q -B package -DskipTests)

run_direct() {
  rm -f "$work/direct.bsave"; sync
  seconds "$here/beamsave" save --library "$library" --image "$work/direct.bsave" --quiet
}
run_flink() {
  rm -f "$work/flink.bsave"; sync
  seconds "$here/beamsave" save --library "$library" --image "$work/flink.bsave" --quiet \
    -- --runner=FlinkRunner --flinkMaster="127.0.0.1:$port" --parallelism=4
}

echo "warm-up..." >&2
run_direct >/dev/null; run_flink >/dev/null
printf '%-4s %12s %12s\n' run "direct s" "flink s"
: >"$work/direct.times"; : >"$work/flink.times"
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) = 1 ]; then d=$(run_direct); f=$(run_flink); else f=$(run_flink); d=$(run_direct); fi
  echo "$d" >>"$work/direct.times"; echo "$f" >>"$work/flink.times"
  printf '%-4s %12s %12s\n' "$i" "$d" "$f"
done
md=$(median <"$work/direct.times"); mf=$(median <"$work/flink.times")
echo
printf 'library: %s (%s); medians of %d runs after a warm-up\n' "$library" "$(du -sh "$library" | cut -f1)" "$runs"
printf '%-36s %8s s\n' "DirectRunner" "$md" "Flink session cluster (2 TaskManagers)" "$mf"
awk -v d="$md" -v f="$mf" 'BEGIN { printf "cluster / direct: %.2fx (target: at most 1.3x)\n", f / d }'

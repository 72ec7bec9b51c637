#!/usr/bin/env bash
# Saves DIR with beamsave (zstd:3) and with `tar -cf - DIR | zstd -3 -T2`, interleaved, after one
# warm-up run of each, and prints per-run wall times, medians, throughput, sizes and peak RSS.
# usage: bench/save-vs-peers.sh [--encrypted] DIR [RUNS]      (RUNS defaults to 5; at least 3)
# --encrypted compares instead beamsave's save and restore with and without encryption (for an
# X25519 recipient) and restic's encrypted backup and restore of DIR (apt-get install restic;
# left out where it is not installed).
# BEAMSAVE picks the launcher (another checkout's, to compare versions).
# Needs zstd and GNU time (apt-get install zstd time). BENCH_WORK picks the scratch directory.
set -euo pipefail
encrypted=false
if [ "${1:-}" = --encrypted ]; then
  encrypted=true
  shift
fi
dir=$(realpath "${1:?usage: bench/save-vs-peers.sh [--encrypted] DIR [RUNS]}")
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "zstd time" zstd tar /usr/bin/time
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

if $encrypted; then
  # shellcheck source=bench/encrypted.sh
  . "$here/bench/encrypted.sh"
  exit 0
fi


run_beamsave() {
  rm -f "$work/image.bsave"
  measure "$beamsave" save --library "$dir" --image "$work/image.bsave" --codec zstd:3 \
    --quiet --report-json "$work/report.json"
}

run_tar() {
  rm -f "$work/tar.zst"
  measure bash -c "tar -cf - -C '$dir' . 2>/dev/null | zstd -3 -T2 -q -o '$work/tar.zst'"
}

echo "warm-up (builds the jar and its class-data archive on first use)..." >&2
run_beamsave >/dev/null
run_tar >/dev/null

: >"$work/b.txt"
: >"$work/t.txt"
printf '%-4s %12s %12s\n' run "beamsave s" "tar|zstd s"
for i in $(seq 1 "$runs"); do
  # Alternate which goes first so drift on a noisy machine hits both alike.
  if [ $((i % 2)) -eq 1 ]; then b=$(run_beamsave); t=$(run_tar); else t=$(run_tar); b=$(run_beamsave); fi
  echo "$b" >>"$work/b.txt"
  echo "$t" >>"$work/t.txt"
  printf '%-4s %12s %12s\n' "$i" "${b% *}" "${t% *}"
done

raw=$(sed -n 's/.*"rawBytes" : \([0-9]*\).*/\1/p' "$work/report.json" | head -n 1)
bsize=$(stat -c %s "$work/image.bsave")
tsize=$(stat -c %s "$work/tar.zst")
bmed=$(cut -d' ' -f1 "$work/b.txt" | median)
tmed=$(cut -d' ' -f1 "$work/t.txt" | median)
brss=$(cut -d' ' -f2 "$work/b.txt" | sort -g | tail -n 1)
trss=$(cut -d' ' -f2 "$work/t.txt" | sort -g | tail -n 1)
awk -v raw="$raw" -v bm="$bmed" -v tm="$tmed" -v bs="$bsize" -v ts="$tsize" -v br="$brss" \
    -v tr="$trss" -v runs="$runs" 'BEGIN {
  printf "\nlibrary: %.1f MiB of file data; medians of %d runs after a warm-up\n", raw/1048576, runs
  printf "%-22s %14s %14s %10s\n", "", "beamsave", "tar|zstd -T2", "ratio"
  printf "%-22s %14.2f %14.2f %10.2f\n", "median wall s", bm, tm, bm/tm
  printf "%-22s %14.1f %14.1f %10.2fx\n", "throughput MB/s", raw/1e6/bm, raw/1e6/tm, tm/bm
  printf "%-22s %14d %14d %+9.2f%%\n", "output bytes", bs, ts, (bs-ts)*100/ts
  printf "%-22s %14.1f %14.1f\n", "compression ratio", raw/bs, raw/ts
  printf "%-22s %14.0f %14.0f\n", "peak RSS MiB (max)", br/1024, tr/1024
}'

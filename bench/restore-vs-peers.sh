#!/usr/bin/env bash
# Saves DIR once with beamsave (zstd:3) and once with `tar -cf - DIR | zstd -3 -T2`, then
# restores each into an empty directory, interleaved, after one warm-up restore of each, and
# prints per-run wall times, medians, throughput and peak RSS. The two restores do the same
# work: names, modes, times (and owners as root), every checksum checked (beamsave's block and
# file digests; zstd's frame checksum).
# usage: bench/restore-vs-peers.sh DIR [RUNS]      (RUNS defaults to 5; at least 3)
# BEAMSAVE picks the launcher (another checkout's, to compare versions).
# Needs zstd and GNU time (apt-get install zstd time). BENCH_WORK picks the scratch directory,
# which needs room for the two archives and two copies of DIR.
set -euo pipefail
dir=$(realpath "${1:?usage: bench/restore-vs-peers.sh DIR [RUNS]}")
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "zstd time" zstd tar /usr/bin/time
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "saving the two archives..." >&2
"$beamsave" save --library "$dir" --image "$work/image.bsave" --codec zstd:3 --quiet \
  --report-json "$work/report.json" >/dev/null
tar -cf - -C "$dir" . 2>/dev/null | zstd -3 -T2 -q -o "$work/tar.zst"
# The page cache holds both archives alike: each restore reads its archive from memory.
cat "$work/image.bsave" "$work/tar.zst" >/dev/null

run_beamsave() {
  rm -rf "$work/b"
  measure "$beamsave" restore --image "$work/image.bsave" --target "$work/b" --quiet
}

run_tar() {
  rm -rf "$work/t"
  mkdir "$work/t"
  measure bash -c "zstd -dc -q '$work/tar.zst' | tar -xf - -C '$work/t'"
}

echo "warm-up..." >&2
run_beamsave >/dev/null
run_tar >/dev/null
# Both restores must give the tree that was saved; checked once, outside the clock.
diff -r --no-dereference "$dir" "$work/b" >/dev/null || { echo "beamsave's restore differs" >&2; exit 1; }
diff -r --no-dereference "$dir" "$work/t" >/dev/null || { echo "tar's restore differs" >&2; exit 1; }

: >"$work/b.txt"
: >"$work/t.txt"
printf '%-4s %12s %12s\n' run "beamsave s" "zstd|tar s"
for i in $(seq 1 "$runs"); do
  # The last run's tree is removed before the next starts, off the clock, so that neither
  # restore pays for the other's deletion.
  rm -rf "$work/b" "$work/t"
  sync
  if [ $((i % 2)) -eq 1 ]; then b=$(run_beamsave); t=$(run_tar); else t=$(run_tar); b=$(run_beamsave); fi
  echo "$b" >>"$work/b.txt"
  echo "$t" >>"$work/t.txt"
  printf '%-4s %12s %12s\n' "$i" "${b% *}" "${t% *}"
done

raw=$(sed -n 's/.*"rawBytes" : \([0-9]*\).*/\1/p' "$work/report.json" | head -n 1)
files=$(sed -n 's/.*"files" : \([0-9]*\).*/\1/p' "$work/report.json" | head -n 1)
bmed=$(cut -d' ' -f1 "$work/b.txt" | median)
tmed=$(cut -d' ' -f1 "$work/t.txt" | median)
brss=$(cut -d' ' -f2 "$work/b.txt" | sort -g | tail -n 1)
trss=$(cut -d' ' -f2 "$work/t.txt" | sort -g | tail -n 1)
awk -v raw="$raw" -v files="$files" -v bm="$bmed" -v tm="$tmed" -v br="$brss" -v tr="$trss" \
    -v runs="$runs" 'BEGIN {
  printf "\nlibrary: %.1f MiB of file data in %d files; medians of %d runs after a warm-up\n", raw/1048576, files, runs
  printf "%-22s %14s %14s %10s\n", "", "beamsave", "zstd -dc|tar", "ratio"
  printf "%-22s %14.2f %14.2f %10.2f\n", "median wall s", bm, tm, bm/tm
  printf "%-22s %14.1f %14.1f %10.2fx\n", "throughput MB/s", raw/1e6/bm, raw/1e6/tm, tm/bm
  printf "%-22s %14.0f %14.0f\n", "peak RSS MiB (max)", br/1024, tr/1024
}'

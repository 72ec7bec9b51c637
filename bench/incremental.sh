#!/usr/bin/env bash
# Incremental saves against full ones, on a copy of LIBRARY (which is left alone): per run, a
# full save, then 1 % of the files changed (edits, new files, deletions, renames, a quarter
# each) and a save against the full image; locally and to S3Proxy on loopback. Then a chain of
# 7 daily incrementals (1 % changed each day): the restore of its newest image against the
# restore of a full image of the same tree, and, in S3, consolidating the chain against a new
# full save, with the bytes the consolidation downloaded. Medians of RUNS runs after a warm-up.
# usage: bench/incremental.sh LIBRARY [RUNS]     (RUNS defaults to 3)
# Needs a built tree (mvn -B package). BENCH_WORK picks the scratch directory (it needs room for
# about 3x LIBRARY); STORE_CPUS=1 runs S3Proxy on CPU 1.
set -euo pipefail
source_library=$(realpath "${1:?usage: bench/incremental.sh LIBRARY [RUNS]}")
runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
aws=${AWS_CLI:-$(command -v /usr/bin/aws aws | head -1)}
needs "python3 awscli" python3 java "$aws"
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-incremental-bench.XXXXXX")
start_s3proxy bench
trap 'stop_s3proxy; rm -rf "$work"' EXIT
s3=(--s3-endpoint "$endpoint")
aws_for_s3proxy
export AWS_REGION=us-east-1

lib=$work/lib
echo "copying $source_library..." >&2
cp -a "$source_library" "$lib"
raw=$(du -sb "$lib" | cut -f1)
files=$(find "$lib" -type f | wc -l)

# Changes 1 % of the library's files, a quarter each way; $1 seeds the choice.
change_one_percent() {
  python3 - "$lib" "$1" <<'PY'
import os, random, sys
root, seed = sys.argv[1], int(sys.argv[2])
rnd = random.Random(seed)
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
               if not os.path.islink(os.path.join(d, f)))
n = max(4, len(files) // 100)
chosen = rnd.sample(files, n)
q = n // 4
for f in chosen[:q]:                        # edits: new bytes in the middle and an append
    with open(f, "r+b") as h:
        size = os.path.getsize(f)
        h.seek(size // 2)
        h.write(os.urandom(min(4096, max(1, size // 10))))
    with open(f, "ab") as h:
        h.write(b"appended\n")
for i, f in enumerate(chosen[q:2 * q]):     # new files beside them, of their size
    with open(f + ".new%d-%d" % (seed, i), "wb") as h:
        h.write(os.urandom(min(os.path.getsize(f), 1 << 20)))
for f in chosen[2 * q:3 * q]:               # deletions
    os.remove(f)
for f in chosen[3 * q:]:                    # renames
    os.rename(f, f + ".renamed%d" % seed)
PY
}

save_local() {  # $1 image, rest: extra options
  local image=$1; shift
  seconds "$beamsave" save --library "$lib" --image "$image" --codec zstd:3 --quiet "$@"
}
save_s3() {
  local image=$1; shift
  seconds "$beamsave" save --library "$lib" --image "$image" --codec zstd:3 --quiet "${s3[@]}" "$@"
}
restore() {
  rm -rf "$work/restored"
  cold
  seconds "$beamsave" restore "$1" --target "$work/restored" --quiet "${s3[@]}"
  rm -rf "$work/restored"
}
# Writes back what is dirty and, where allowed (root), empties the page cache.
cold() {
  sync
  echo 3 2>/dev/null >/proc/sys/vm/drop_caches || true
}
size_local() { stat -c %s "$1"; }
size_s3() { stat -c %s "$work/s3/bench/${1#s3://bench/}"; }

: >"$work/full-local"; : >"$work/inc-local"; : >"$work/full-s3"; : >"$work/inc-s3"
: >"$work/size"; : >"$work/restore-full"; : >"$work/restore-chain"
: >"$work/consolidate"; : >"$work/full-again"; : >"$work/downloaded"; : >"$work/floor"
printf '%-4s %9s %9s %9s %9s %10s %10s %11s %10s %12s %9s\n' run "full s" "incr s" "full s3" \
  "incr s3" "incr/full" "restore s" "chain-7 s" "consol. s" "downloaded" "s3 cp s"
for i in $(seq 0 "$runs"); do
  rm -rf "$work/images" "$work/s3/bench/"* "$work/restored"
  mkdir -p "$work/images"
  full=$(save_local "$work/images/full.bsave")
  change_one_percent "$((i * 100 + 1))"
  inc=$(save_local "$work/images/inc.bsave" --base "$work/images/full.bsave")
  fullbytes=$(size_local "$work/images/full.bsave")
  incbytes=$(size_local "$work/images/inc.bsave")
  full3=$(save_s3 s3://bench/full.bsave)
  change_one_percent "$((i * 100 + 2))"
  inc3=$(save_s3 s3://bench/inc.bsave --base s3://bench/full.bsave)

  # A week: a full save, then 7 daily incrementals, each against the day before.
  rm -rf "$work/s3/bench/"*
  save_s3 s3://bench/day0.bsave >/dev/null
  for d in 1 2 3 4 5 6 7; do
    change_one_percent "$((i * 100 + 10 + d))"
    save_s3 "s3://bench/day$d.bsave" --base "s3://bench/day$((d - 1)).bsave" >/dev/null
  done
  again=$(save_s3 s3://bench/fresh.bsave)   # the same tree, saved whole
  # Both restores start with nothing in the page cache (what a restore after a disaster
  # meets), in alternating order.
  if [ $((i % 2)) = 0 ]; then
    restore_full=$(restore s3://bench/fresh.bsave); restore_chain=$(restore s3://bench/day7.bsave)
  else
    restore_chain=$(restore s3://bench/day7.bsave); restore_full=$(restore s3://bench/fresh.bsave)
  fi
  t0=$(date +%s.%N)
  "$beamsave" consolidate s3://bench/day7.bsave --to s3://bench/week.bsave --json "${s3[@]}" \
    >"$work/consolidate.json" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  consolidate=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }')
  downloaded=$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("type") == "summary":
        print(o["bytesRead"])' "$work/consolidate.json")
  if [ "$i" = 0 ]; then
    "$beamsave" verify s3://bench/week.bsave --quiet "${s3[@]}" >/dev/null \
      || { echo "the consolidated image does not verify" >&2; exit 1; }
  fi
  weekbytes=$(size_s3 s3://bench/week.bsave)
  # The floor for any copy inside the store: the store copying a whole image of that size.
  floor=$(seconds "$aws" --endpoint-url "$endpoint" s3 cp --only-show-errors \
    s3://bench/fresh.bsave s3://bench/copy.bsave)
  printf '%-4s %9.2f %9.2f %9.2f %9.2f %9.2f%% %10.2f %11.2f %10.2f %11.1f%% %9.2f\n' \
    "$([ "$i" = 0 ] && echo warm || echo "$i")" "$full" "$inc" "$full3" "$inc3" \
    "$(awk -v a="$incbytes" -v b="$fullbytes" 'BEGIN { print 100 * a / b }')" \
    "$restore_full" "$restore_chain" "$consolidate" \
    "$(awk -v a="$downloaded" -v b="$weekbytes" 'BEGIN { print 100 * a / b }')" "$floor"
  [ "$i" = 0 ] && continue
  echo "$full" >>"$work/full-local"; echo "$inc" >>"$work/inc-local"
  echo "$full3" >>"$work/full-s3"; echo "$inc3" >>"$work/inc-s3"
  awk -v a="$incbytes" -v b="$fullbytes" 'BEGIN { print 100 * a / b }' >>"$work/size"
  echo "$restore_full" >>"$work/restore-full"; echo "$restore_chain" >>"$work/restore-chain"
  echo "$consolidate" >>"$work/consolidate"; echo "$again" >>"$work/full-again"
  echo "$floor" >>"$work/floor"
  awk -v a="$downloaded" -v b="$weekbytes" 'BEGIN { print 100 * a / b }' >>"$work/downloaded"
done

m() { median <"$work/$1"; }
awk -v raw="$raw" -v files="$files" -v runs="$runs" \
    -v fl="$(m full-local)" -v il="$(m inc-local)" -v fs="$(m full-s3)" -v is="$(m inc-s3)" \
    -v size="$(m size)" -v rf="$(m restore-full)" -v rc="$(m restore-chain)" \
    -v co="$(m consolidate)" -v fa="$(m full-again)" -v dl="$(m downloaded)" \
    -v fl2="$(m floor)" 'BEGIN {
  printf "\nlibrary: %.2f GiB in %d files, 1 %% of the files changed per save; medians of %d runs after a warm-up\n", raw/1073741824, files, runs
  printf "| measurement | result | target |\n|---|---|---|\n"
  printf "| incremental save wall time, local | %.2f s vs %.2f s full: %.1f %% | at most 15 %% |\n", il, fl, 100*il/fl
  printf "| incremental save wall time, S3Proxy | %.2f s vs %.2f s full: %.1f %% | at most 15 %% |\n", is, fs, 100*is/fs
  printf "| incremental image size | %.2f %% of the full image | at most 3 %% |\n", size
  printf "| restore of the newest of 7 daily incrementals (S3) | %.2f s vs %.2f s for a full image: %.2fx | at least 0.8x |\n", rc, rf, rf/rc
  printf "| consolidating that chain in S3 | %.2f s vs %.2f s for a new full save: %.2fx faster, %.2f %% of the image downloaded | at least 3x, at most 5 %% |\n", co, fa, fa/co, dl
  printf "(the store copying a whole image of that size, aws s3 cp s3:// s3://: %.2f s)\n", fl2
}'

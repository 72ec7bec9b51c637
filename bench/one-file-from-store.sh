#!/usr/bin/env bash
# Restores one small file of LIBRARY from object storage: beamsave from an image saved to one
# S3Proxy on loopback (`restore s3://... --include FILE`) against restic from a repository in the
# same S3Proxy (`restic restore latest --include FILE`), interleaved after one warm-up run of
# each; then `beamsave list` of the image against `restic ls latest`. Prints per-run wall times,
# medians and the ratios. Each restore is checked against the library (cmp).
# usage: bench/one-file-from-store.sh LIBRARY [RUNS]     (RUNS defaults to 5; at least 3)
# Needs restic (apt-get install restic) and a built tree (mvn -B package). FILE is the
# thousandth file of 3-5 KiB in path order; ONE_FILE picks another (a path in LIBRARY).
# BEAMSAVE picks the launcher; BENCH_WORK picks the scratch directory; STORE_CPUS=1 runs
# S3Proxy on CPU 1.
set -euo pipefail
library=$(realpath "${1:?usage: bench/one-file-from-store.sh LIBRARY [RUNS]}")
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "restic" restic java
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-one-file.XXXXXX")
start_s3proxy bench restic
trap 'stop_s3proxy; rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_DEFAULT_REGION=us-east-1
export RESTIC_PASSWORD=bench
repo="s3:$endpoint/restic"

file=${ONE_FILE:-$(cd "$library" && find . -type f -size +3k -size -5k | LC_ALL=C sort \
  | sed -n 1000p | sed 's|^\./||')}
[ -n "$file" ] && [ -f "$library/$file" ] || { echo "no file to restore in $library" >&2; exit 1; }
echo "file: $file ($(stat -c %s "$library/$file") bytes); saving the library both ways..." >&2
"$beamsave" save --library "$library" --image s3://bench/lib.bsave --s3-endpoint "$endpoint" \
  --quiet >/dev/null
restic -q -r "$repo" init >/dev/null
restic -q -r "$repo" backup "$library" >/dev/null

run_beamsave() {
  rm -rf "$work/b"
  seconds "${client_cmd[@]}" "$beamsave" restore s3://bench/lib.bsave --include "$file" \
    --target "$work/b" --s3-endpoint "$endpoint" --quiet
  cmp "$library/$file" "$work/b/$file" >&2
}
run_restic() {
  rm -rf "$work/r"
  seconds "${client_cmd[@]}" restic -q -r "$repo" restore latest --include "$library/$file" \
    --target "$work/r"
  cmp "$library/$file" "$work/r$library/$file" >&2
}

echo "warm-up..." >&2
run_beamsave >/dev/null; run_restic >/dev/null
printf '%-4s %12s %12s %14s %14s\n' run "restore s" "restic s" "list s" "restic ls s"
: >"$work/t.b"; : >"$work/t.r"; : >"$work/t.bl"; : >"$work/t.rl"
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) = 1 ]; then b=$(run_beamsave); r=$(run_restic); else r=$(run_restic); b=$(run_beamsave); fi
  bl=$(seconds "${client_cmd[@]}" "$beamsave" list s3://bench/lib.bsave --s3-endpoint "$endpoint")
  rl=$(seconds "${client_cmd[@]}" restic -q -r "$repo" ls latest)
  echo "$b" >>"$work/t.b"; echo "$r" >>"$work/t.r"; echo "$bl" >>"$work/t.bl"; echo "$rl" >>"$work/t.rl"
  printf '%-4s %12.2f %12.2f %14.2f %14.2f\n' "$i" "$b" "$r" "$bl" "$rl"
done
awk -v runs="$runs" -v b="$(median <"$work/t.b")" -v r="$(median <"$work/t.r")" \
    -v bl="$(median <"$work/t.bl")" -v rl="$(median <"$work/t.rl")" 'BEGIN {
  printf "\nmedians of %d runs after a warm-up, S3Proxy (filesystem) on loopback\n", runs
  printf "%-12s %10s %10s %8s\n", "", "beamsave", "restic", "ratio"
  printf "%-12s %10.2f %10.2f %7.2fx\n", "one file", b, r, r/b
  printf "%-12s %10.2f %10.2f %7.2fx\n", "list", bl, rl, rl/bl
}'

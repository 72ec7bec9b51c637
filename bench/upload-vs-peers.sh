#!/usr/bin/env bash
# Uploads IMAGE to one S3Proxy on loopback with beamsave, `aws s3 cp` (Debian's awscli) and
# `rclone copyto`, interleaved, after one warm-up run of each, and prints per-run wall times,
# medians, throughput and beamsave's ratio to the faster peer.
# usage: bench/upload-vs-peers.sh IMAGE [RUNS]     (RUNS defaults to 5; at least 3)
# Needs awscli and rclone (apt-get install awscli rclone) and a built tree (mvn -B package).
# Extra beamsave upload options go in BEAMSAVE_UPLOAD_OPTS; BENCH_WORK picks the scratch directory;
# STORE_CPUS=1 runs S3Proxy on CPU 1 and the three clients on the others.
set -euo pipefail
image=$(realpath "${1:?usage: bench/upload-vs-peers.sh IMAGE [RUNS]}")
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
aws=/usr/bin/aws   # Debian's awscli, not another 'aws' that may be earlier on PATH
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "awscli rclone" "$aws" rclone java
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-upload-bench.XXXXXX")
start_s3proxy bench
trap 'stop_s3proxy; rm -rf "$work"' EXIT

aws_for_s3proxy
export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Other
export RCLONE_CONFIG_BENCH_ENDPOINT=$endpoint RCLONE_CONFIG_BENCH_FORCE_PATH_STYLE=true
export RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=bench RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=bench-secret

# Each tool writes its own key, removed before each run (rclone skips identical objects), and
# the disk is synced first so no run pays for writing back the previous one's bytes.
clean() {
  rm -f "$work/s3/bench/"*.bsave
  sync
}
run_beamsave() {
  clean
  # shellcheck disable=SC2086
  seconds "${client_cmd[@]}" "$here/beamsave" upload --from "$image" --to s3://bench/beamsave.bsave \
    --s3-endpoint "$endpoint" --quiet ${BEAMSAVE_UPLOAD_OPTS:-}
}
run_aws() {
  clean
  seconds "${client_cmd[@]}" "$aws" --endpoint-url "$endpoint" s3 cp --only-show-errors "$image" s3://bench/aws.bsave
}
run_rclone() {
  clean
  seconds "${client_cmd[@]}" rclone copyto "$image" bench:bench/rclone.bsave
}

echo "warm-up..." >&2
run_beamsave >/dev/null; run_aws >/dev/null; run_rclone >/dev/null
printf '%-4s %12s %12s %12s\n' run "beamsave s" "aws s3 cp s" "rclone s"
: >"$work/b"; : >"$work/a"; : >"$work/r"
for i in $(seq 1 "$runs"); do
  # Rotate the order so drift on a noisy machine hits every tool alike.
  case $((i % 3)) in
    1) b=$(run_beamsave); a=$(run_aws); r=$(run_rclone) ;;
    2) a=$(run_aws); r=$(run_rclone); b=$(run_beamsave) ;;
    0) r=$(run_rclone); b=$(run_beamsave); a=$(run_aws) ;;
  esac
  echo "$b" >>"$work/b"; echo "$a" >>"$work/a"; echo "$r" >>"$work/r"
  printf '%-4s %12.2f %12.2f %12.2f\n' "$i" "$b" "$a" "$r"
done
run_beamsave >/dev/null
cmp -s "$image" "$work/s3/bench/beamsave.bsave" || { echo "stored object differs from the image" >&2; exit 1; }
size=$(stat -c %s "$image")
awk -v size="$size" -v runs="$runs" -v b="$(median <"$work/b")" -v a="$(median <"$work/a")" \
    -v r="$(median <"$work/r")" 'BEGIN {
  peer = (a < r) ? a : r; name = (a < r) ? "aws s3 cp" : "rclone"
  printf "\nimage: %.1f MiB; medians of %d runs after a warm-up, S3Proxy (filesystem) on loopback\n", size/1048576, runs
  printf "%-16s %10s %10s\n", "", "median s", "MB/s"
  printf "%-16s %10.2f %10.1f\n", "beamsave", b, size/1e6/b
  printf "%-16s %10.2f %10.1f\n", "aws s3 cp", a, size/1e6/a
  printf "%-16s %10.2f %10.1f\n", "rclone", r, size/1e6/r
  printf "beamsave vs the faster peer (%s): %.2fx\n", name, peer/b
}'

#!/usr/bin/env bash
# Saves LIBRARY straight to one S3Proxy on loopback with `beamsave save --image s3://...` and with
# the pipe an operator would type, `tar -cf - LIBRARY | zstd -3 -T2 | aws s3 cp - s3://...`,
# interleaved, after one warm-up run of each; prints per-run wall times, medians and the ratio.
# usage: bench/save-to-store.sh LIBRARY [RUNS]     (RUNS defaults to 5; at least 3)
# Needs awscli and zstd (apt-get install awscli zstd) and a built tree (mvn -B package).
# BEAMSAVE picks the launcher (another checkout's, to compare versions); extra save options go in
# BEAMSAVE_SAVE_OPTS; BENCH_WORK picks the scratch directory; STORE_CPUS=1 runs S3Proxy on CPU 1.
set -euo pipefail
library=$(realpath "${1:?usage: bench/save-to-store.sh LIBRARY [RUNS]}")
runs=${2:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
aws=/usr/bin/aws   # Debian's awscli, not another 'aws' that may be earlier on PATH
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "awscli zstd" "$aws" zstd tar java
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-store-bench.XXXXXX")
start_s3proxy bench
trap 'stop_s3proxy; rm -rf "$work"' EXIT
aws_for_s3proxy

clean() {
  rm -rf "$work/s3/bench/"*
  sync
}
run_beamsave() {
  clean
  # shellcheck disable=SC2086
  seconds "${client_cmd[@]}" "$beamsave" save --library "$library" --image s3://bench/lib.bsave \
    --codec zstd:3 --s3-endpoint "$endpoint" --quiet ${BEAMSAVE_SAVE_OPTS:-}
}
pipe() {
  tar -C "$(dirname "$library")" -cf - "$(basename "$library")" | zstd -3 -T2 -q -c \
    | "$aws" --endpoint-url "$endpoint" s3 cp --only-show-errors - s3://bench/lib.tar.zst
}
run_pipe() {
  clean
  seconds "${client_cmd[@]}" bash -c "set -o pipefail; $(declare -f pipe); aws=$aws endpoint=$endpoint library='$library' pipe"
}

echo "warm-up..." >&2
run_beamsave >/dev/null; run_pipe >/dev/null
printf '%-4s %12s %16s\n' run "beamsave s" "tar|zstd|aws s"
: >"$work/b"; : >"$work/p"
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) = 1 ]; then b=$(run_beamsave); p=$(run_pipe); else p=$(run_pipe); b=$(run_beamsave); fi
  echo "$b" >>"$work/b"; echo "$p" >>"$work/p"
  printf '%-4s %12.2f %16.2f\n' "$i" "$b" "$p"
done
run_beamsave >/dev/null
"$beamsave" verify --image s3://bench/lib.bsave --s3-endpoint "$endpoint" --quiet \
  || { echo "the image does not verify" >&2; exit 1; }
image=$(stat -c %s "$work/s3/bench/lib.bsave")
run_pipe >/dev/null
tarzst=$(stat -c %s "$work/s3/bench/lib.tar.zst")
raw=$(du -sb "$library" | cut -f1)
awk -v raw="$raw" -v runs="$runs" -v b="$(median <"$work/b")" -v p="$(median <"$work/p")" \
    -v image="$image" -v tarzst="$tarzst" 'BEGIN {
  printf "\nlibrary: %.1f MiB; medians of %d runs after a warm-up, S3Proxy (filesystem) on loopback\n", raw/1048576, runs
  printf "%-22s %10s %10s %12s\n", "", "median s", "MB/s", "stored MiB"
  printf "%-22s %10.2f %10.1f %12.1f\n", "beamsave save s3://", b, raw/1e6/b, image/1048576
  printf "%-22s %10.2f %10.1f %12.1f\n", "tar|zstd -3|aws s3 cp", p, raw/1e6/p, tarzst/1048576
  printf "beamsave vs the pipe: %.2fx\n", p/b
}'

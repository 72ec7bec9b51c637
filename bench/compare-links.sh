#!/usr/bin/env bash
# Runs `beamsave compare` on LIBRARY against one S3Proxy on loopback at emulated links of
# 100, 1000 and 10000 Mbit/s: every strategy (baseline, compress at save, compress in
# transfer, compress while transferring) with lz4, zlib:6, zstd:3 and auto, RUNS times, and
# writes the report (table, results.csv/json, chart.png, index.html) to OUT.
# usage: bench/compare-links.sh LIBRARY [RUNS] [OUT]     (RUNS defaults to 3)
# Override the codecs with CODECS=..., the links with LINKS=...; BENCH_WORK picks the scratch
# directory (objects are written there and removed at the end). STORE_CPUS=1 runs S3Proxy on
# CPU 1 and beamsave on the others, so the store's work does not land on the client's cores, as
# with a store across a real link.
set -euo pipefail
library=$(realpath "${1:?usage: bench/compare-links.sh LIBRARY [RUNS] [OUT]}")
runs=${2:-3}
out=$(realpath -m "${3:-compare-report}")
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-compare-bench.XXXXXX")
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
start_s3proxy compare
trap 'stop_s3proxy; rm -rf "$work"' EXIT
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret
[ -z "$client_cpus" ] || echo "S3Proxy on CPU $STORE_CPUS, beamsave on CPU $client_cpus"
"${client_cmd[@]}" "$here/beamsave" compare --library "$library" --to s3://compare/run --runs "$runs" \
  --codecs "${CODECS:-lz4,zlib:6,zstd:3,auto}" --link-mbps "${LINKS:-100,1000,10000}" \
  --out "$out" --s3-endpoint "$endpoint"
echo "report: $out/index.html"

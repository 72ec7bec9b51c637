#!/usr/bin/env bash
# Many small files: generates N files (bench/make-many-files.py: directories of 1,000 files of
# 100-200 bytes each; --empty for empty files) and measures, after one warm-up of each, RUNS
# interleaved runs of:
#   save     beamsave save --codec zstd:3         vs  tar -cf - | zstd -3 -T2
#   list     beamsave list (whole, and one directory)
#   restore  beamsave restore (whole)             vs  zstd -dc | tar -x
#   one file beamsave restore --include d0000/f000.txt, and restic restore --include of the
#            same file when restic is installed (apt-get install restic)
# printing medians, ratios and peak RSS (GNU time). The tree is kept in BENCH_WORK/many-N (made
# once); BEAMSAVE picks the launcher, BEAMSAVE_JAVA_OPTS (say -Xmx1g) its heap.
# usage: bench/many-files.sh N [RUNS] [--empty]          (RUNS defaults to 3)
set -euo pipefail
n=${1:?usage: bench/many-files.sh N [RUNS] [--empty]}
runs=${2:-3}
empty=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "zstd time" zstd tar /usr/bin/time python3
base=${BENCH_WORK:-/tmp}
tree="$base/many-$n${empty:+-empty}"
if [ ! -d "$tree" ]; then
  echo "generating $n files in $tree..." >&2
  python3 "$here/bench/make-many-files.py" "$tree.tmp" "$n" $empty
  mv "$tree.tmp" "$tree"
fi
work=$(mktemp -d "$base/beamsave-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
restic=false
if command -v restic >/dev/null; then
  restic=true
  export RESTIC_PASSWORD=bench RESTIC_REPOSITORY="$work/restic"
  restic init -q >/dev/null
  restic backup -q "$tree" >/dev/null
fi

b_save() { rm -f "$work/i.bsave"; measure "$beamsave" save --library "$tree" --image "$work/i.bsave" --codec zstd:3 --quiet; }
t_save() { rm -f "$work/t.tar.zst"; measure bash -c "tar -cf - -C '$tree' . | zstd -3 -T2 -q -o '$work/t.tar.zst'"; }
b_list() { measure "$beamsave" list "$work/i.bsave"; }
b_list_dir() { measure "$beamsave" list "$work/i.bsave" d0000; }
b_restore() { rm -rf "$work/r"; measure "$beamsave" restore "$work/i.bsave" --target "$work/r" --quiet; }
t_restore() { rm -rf "$work/x"; mkdir "$work/x"; measure bash -c "zstd -dc '$work/t.tar.zst' | tar -xf - -C '$work/x'"; }
b_one() { rm -rf "$work/o"; measure "$beamsave" restore "$work/i.bsave" --target "$work/o" --include d0000/f000.txt --quiet; }
r_one() { rm -rf "$work/ro"; measure restic restore latest --target "$work/ro" --include "$tree/d0000/f000.txt" -q; }

echo "warm-up..." >&2
b_save >/dev/null
t_save >/dev/null
names=(b_save t_save b_list b_list_dir b_restore t_restore b_one)
$restic && names+=(r_one)
for f in "${names[@]}"; do : >"$work/$f.txt"; done
for i in $(seq 1 "$runs"); do
  # Alternate the order of the pairs so drift on a noisy machine hits both alike.
  if [ $((i % 2)) -eq 1 ]; then order=("${names[@]}"); else order=(t_save b_save b_list b_list_dir t_restore b_restore b_one); $restic && order+=(r_one); fi
  for f in "${order[@]}"; do "$f" >>"$work/$f.txt"; done
  echo "run $i done" >&2
done

med() { cut -d' ' -f1 "$work/$1.txt" | median; }
rss() { cut -d' ' -f2 "$work/$1.txt" | sort -g | tail -n 1 | awk '{printf "%.0f", $1/1024}'; }
bsize=$(stat -c %s "$work/i.bsave")
tsize=$(stat -c %s "$work/t.tar.zst")
printf '\n%d files%s; medians of %d runs after a warm-up (seconds, peak RSS MiB)\n' "$n" "${empty:+ (empty)}" "$runs"
printf '%-22s %10s %8s %14s %8s %8s\n' work beamsave RSS peer RSS ratio
row() { awk -v a="$(med "$2")" -v b="$(med "$3")" -v ra="$(rss "$2")" -v rb="$(rss "$3")" -v w="$1" \
  'BEGIN { printf "%-22s %10.2f %8d %14.2f %8d %7.2fx\n", w, a, ra, b, rb, b/a }'; }
one() { awk -v a="$(med "$2")" -v ra="$(rss "$2")" -v w="$1" 'BEGIN { printf "%-22s %10.2f %8d\n", w, a, ra }'; }
row "save (tar|zstd -T2)" b_save t_save
row "restore (zstd|tar -x)" b_restore t_restore
one "list" b_list
one "list d0000" b_list_dir
if $restic; then row "one file (restic)" b_one r_one; else one "one file" b_one; fi
awk -v b="$bsize" -v t="$tsize" 'BEGIN { printf "%-22s %10d %8s %14d %8s %+7.1f%%\n", "output bytes", b, "", t, "", (b-t)*100/t }'

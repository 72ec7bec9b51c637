#!/usr/bin/env bash
# What an incremental save stores, and how long it takes, when large files change a little:
# beamsave `save --base` beside restic's backup of the same change into a repository that holds
# the first version, and beside `tar -g | zstd -3` (GNU tar's incremental format, whole files).
# Cases, each on a fresh library made of one 500 MB file of text (a log, a database, a disk):
#   pages     two 4 KiB pages rewritten in place
#   append    10 MB appended
#   rename    the file renamed (mv), nothing else changed
#   rotate    the file renamed to .1 and a new 1 MB log begun at its name
#   insert    100 bytes inserted at the start (shifts every byte after them)
# Per case and tool: the bytes the incremental added (image, repository growth, archive) and
# the seconds it took; medians of RUNS runs after a warm-up. Then the restore of the incremental
# and of its consolidation beside the restore of a full image of the same tree.
# usage: bench/changed-blocks.sh [RUNS] [CASES...]    (RUNS defaults to 3)
# Needs restic and zstd (apt-get install restic zstd). BENCH_WORK picks the scratch directory
# (about 4 GB); SIZE_MB the file's size (500).
set -euo pipefail
runs=${1:-3}
shift || true
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(pages append rename rotate insert)
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
size_mb=${SIZE_MB:-500}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "restic zstd" restic zstd tar python3
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-changed-blocks.XXXXXX")
trap 'rm -rf "$work"' EXIT
export RESTIC_PASSWORD=bench RESTIC_CACHE_DIR=$work/restic-cache

# The first version of the library: one file of text that compresses as logs do, made once.
python3 - "$work/seed.log" "$size_mb" <<'PY'
import random, sys
path, mb = sys.argv[1], int(sys.argv[2])
r = random.Random(46)
words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9)))
         for _ in range(5000)]
with open(path, "w") as f:
    n = 0
    while n < mb * 1_000_000:
        line = "%d %s\n" % (r.getrandbits(40), " ".join(r.choice(words) for _ in range(11)))
        f.write(line)
        n += len(line)
PY

# Makes $work/lib the case's first version ($1); `change` then makes its second.
first() {
  rm -rf "$work/lib"
  mkdir -p "$work/lib"
  cp "$work/seed.log" "$work/lib/data.log"
}
change() {
  case $1 in
    pages) python3 - "$work/lib/data.log" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    for at in (123_456_789, 345_678_901):
        f.seek(at)
        f.write(b"P" * 4096)
PY
    ;;
    append) head -c 10000000 "$work/seed.log" >>"$work/lib/data.log" ;;
    rename) mv "$work/lib/data.log" "$work/lib/data-renamed.log" ;;
    rotate)
      mv "$work/lib/data.log" "$work/lib/data.log.1"
      tail -c 1000000 "$work/seed.log" >"$work/lib/data.log"
      ;;
    insert) python3 - "$work/lib/data.log" <<'PY'
import sys
with open(sys.argv[1], "rb") as f:
    b = f.read()
with open(sys.argv[1], "wb") as f:
    f.write(b"I" * 100 + b)
PY
    ;;
    *) echo "unknown case $1" >&2; exit 1 ;;
  esac
}

# beamsave: a full image of the first version, then the incremental of the second.
beamsave_run() {  # $1 case; prints "seconds bytes"
  rm -rf "$work/img"; mkdir -p "$work/img"
  first
  "$beamsave" save --library "$work/lib" --image "$work/img/full.bsave" --quiet >/dev/null
  change "$1"
  local s
  s=$(seconds "$beamsave" save --library "$work/lib" --image "$work/img/inc.bsave" \
    --base "$work/img/full.bsave" --quiet)
  echo "$s $(stat -c %s "$work/img/inc.bsave")"
}
# restic: a repository with the first version, then the backup of the second: what it added.
restic_run() {
  rm -rf "$work/repo"
  first
  restic init --repo "$work/repo" >/dev/null 2>&1
  (cd "$work" && restic --repo "$work/repo" backup lib >/dev/null 2>&1)
  local before s
  before=$(du -sb "$work/repo" | cut -f1)
  change "$1"
  s=$(cd "$work" && seconds restic --repo "$work/repo" backup lib)
  echo "$s $(($(du -sb "$work/repo" | cut -f1) - before))"
}
# GNU tar's incremental (listed-incremental): changed files whole, through zstd -3.
tar_run() {
  rm -f "$work/snar" "$work/level0.tar.zst" "$work/level1.tar.zst"
  first
  tar -g "$work/snar" -cf - -C "$work" lib | zstd -3 -T2 -q -o "$work/level0.tar.zst"
  change "$1"
  local s
  s=$(seconds bash -c "tar -g '$work/snar' -cf - -C '$work' lib | zstd -3 -T2 -q -o '$work/level1.tar.zst'")
  echo "$s $(stat -c %s "$work/level1.tar.zst")"
}

echo "warm-up..." >&2
beamsave_run pages >/dev/null
restic_run pages >/dev/null

printf '%-9s %-9s %10s %14s\n' case tool "median s" "median bytes"
for c in "${cases[@]}"; do
  for tool in beamsave restic tar; do
    : >"$work/s"; : >"$work/b"
    for _ in $(seq 1 "$runs"); do
      read -r s b < <("${tool}_run" "$c")
      echo "$s" >>"$work/s"; echo "$b" >>"$work/b"
    done
    printf '%-9s %-9s %10s %14s\n' "$c" "$tool" "$(median <"$work/s")" "$(median <"$work/b")"
  done
  if [ "$c" = pages ]; then
    # The full image of that case, for the incremental's share of it.
    beamsave_run pages >/dev/null
    printf '%-9s %-9s %10s %14s\n' "$c" "full" "-" "$(stat -c %s "$work/img/full.bsave")"
  fi
done

# Restore: the incremental of the pages case, its consolidation, and a full image of the
# same tree, each into an empty directory, alternating.
beamsave_run pages >/dev/null
"$beamsave" save --library "$work/lib" --image "$work/img/same-tree.bsave" --quiet >/dev/null
"$beamsave" consolidate "$work/img/inc.bsave" --to "$work/img/cons.bsave" --quiet >/dev/null
restore() { rm -rf "$work/out"; seconds "$beamsave" restore "$1" --target "$work/out" --quiet; }
: >"$work/ri"; : >"$work/rc"; : >"$work/rf"
for i in $(seq 1 "$runs"); do
  if [ $((i % 2)) = 1 ]; then
    restore "$work/img/inc.bsave" >>"$work/ri"; restore "$work/img/cons.bsave" >>"$work/rc"
    restore "$work/img/same-tree.bsave" >>"$work/rf"
  else
    restore "$work/img/same-tree.bsave" >>"$work/rf"; restore "$work/img/cons.bsave" >>"$work/rc"
    restore "$work/img/inc.bsave" >>"$work/ri"
  fi
  cmp -s "$work/out/data.log" "$work/lib/data.log" || { echo "restore differs" >&2; exit 1; }
done
printf 'restore   incremental %s s, consolidated %s s, full image of the same tree %s s\n' \
  "$(median <"$work/ri")" "$(median <"$work/rc")" "$(median <"$work/rf")"

#!/usr/bin/env bash
# What each tool gives back of a tree that holds everything a Linux filesystem keeps besides
# bytes, and at what cost: beamsave (save, then restore), GNU tar with --xattrs --acls --sparse
# piped through zstd -3 -T2 (then extracted), and rsync -aHAXS (a copy). The tree (built as
# root under the scratch directory): DATA copied in (a few hundred MB of ordinary files), a
# hard-linked copy of part of it (cp -al), user and trusted extended attributes, ACLs (access
# and default), a file capability, a FIFO, a character and a block device, a file owned by
# nobody, and a 4 GiB sparse file of two small extents.
# Prints, for each tool, the median wall seconds of RUNS saves and restores (rsync: copies)
# after a warm-up, the stored bytes, and whether each kind of metadata came back, checked with
# getfattr, getfacl, getcap, stat and du against the tree.
# usage: sudo bench/metadata-vs-peers.sh DATA [RUNS]   (RUNS defaults to 3)
# Needs root, and attr, acl, libcap2-bin, zstd, rsync and GNU time (apt-get install ...).
# BEAMSAVE picks the launcher; BENCH_WORK picks the scratch directory.
set -euo pipefail
export PATH=$PATH:/usr/sbin:/sbin   # setcap, getcap, mknod
data=$(realpath "${1:?usage: bench/metadata-vs-peers.sh DATA [RUNS]}")
runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
needs "attr acl libcap2-bin zstd rsync" setfattr setfacl setcap zstd rsync
[ "$(id -u)" = 0 ] || { echo "run as root: devices, trusted. attributes and capabilities need it" >&2; exit 1; }
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-metadata.XXXXXX")
trap 'rm -rf "$work"' EXIT
lib=$work/lib

echo "building the tree under $lib..." >&2
mkdir -p "$lib"
cp -a "$data" "$lib/data"
first=$(cd "$lib/data" && find . -mindepth 1 -maxdepth 1 -type d | LC_ALL=C sort | head -1)
cp -al "$lib/data/$first" "$lib/linked"
(
  cd "$lib"
  echo x > f && setfattr -n user.color -v blue f && setfattr -n trusted.t -v tv f
  touch acl && setfacl -m u:nobody:rwx,g:nogroup:r acl
  mkdir acld && setfacl -d -m g:nogroup:rx acld
  cp /bin/true capbin && setcap cap_net_raw+ep capbin
  mkfifo pipe && mknod cdev c 1 3 && mknod bdev b 7 200
  chown nobody:nogroup f pipe
  truncate -s 4G sparse.img
  printf first | dd of=sparse.img bs=1 seek=1000000 conv=notrunc status=none
  printf second | dd of=sparse.img bs=1 seek=3000000000 conv=notrunc status=none
)
echo "$(du -sh --apparent-size "$lib" | cut -f1) apparent, $(du -sh "$lib" | cut -f1) allocated," \
  "$(find "$lib" | wc -l) entries" >&2

# What each check finds, one line per item, for the tree at $1.
describe() {
  (
    cd "$1"
    echo "xattrs $(getfattr -R -h -d -m - . 2>/dev/null | grep -v 'system.posix_acl' | sort \
      | md5sum | cut -c1-12)"
    echo "acls $(getfacl -R -P -s . 2>/dev/null | md5sum | cut -c1-12)"
    echo "caps $(getcap -r . 2>/dev/null | md5sum | cut -c1-12)"
    echo "links $(find . -type f -links +1 -printf '%i %p\n' | sort | awk '{print $1}' \
      | uniq -c | awk '{print $1}' | sort | uniq -c | md5sum | cut -c1-12)"
    echo "nodes $(find . \( -type p -o -type c -o -type b \) -printf '%p %y %m\n' | sort \
      | md5sum | cut -c1-12) $(stat -c '%t:%T' cdev bdev 2>/dev/null | tr '\n' ' ')"
    echo "owners $(find . -printf '%p %u:%g\n' | sort | md5sum | cut -c1-12)"
    echo "sparse $(du -k sparse.img | cut -f1) KiB allocated"
    echo "mtimes $(find . ! -type l -printf '%p %T@\n' | sort | md5sum | cut -c1-12)"
  )
}
describe "$lib" >"$work/want"

tarflags=(--xattrs --xattrs-include='*' --acls --sparse)
save_beamsave() { rm -f "$work/b.bsave"; "$beamsave" save --library "$lib" --image "$work/b.bsave" -q; }
restore_beamsave() { rm -rf "$work/out"; "$beamsave" restore "$work/b.bsave" --target "$work/out" -q; }
save_tar() { tar -C "$lib" "${tarflags[@]}" -cf - . | zstd -3 -T2 -q -f -o "$work/t.tar.zst"; }
restore_tar() {
  rm -rf "$work/out" && mkdir "$work/out"
  zstd -dc -q "$work/t.tar.zst" | tar -C "$work/out" "${tarflags[@]}" -xpf - --numeric-owner
}
save_rsync() { rm -rf "$work/out"; rsync -aHAXS "$lib/" "$work/out/"; }
restore_rsync() { :; }

printf '%-10s %10s %10s %14s  %s\n' tool "save s" "restore s" "stored bytes" "came back"
for tool in beamsave tar rsync; do
  "save_$tool" >/dev/null 2>&1
  "restore_$tool" >/dev/null 2>&1
  : >"$work/save-times"
  : >"$work/restore-times"
  for _ in $(seq 1 "$runs"); do
    sync
    seconds "save_$tool" >>"$work/save-times"
    seconds "restore_$tool" >>"$work/restore-times"
  done
  case $tool in
    beamsave) size=$(stat -c %s "$work/b.bsave") ;;
    tar) size=$(stat -c %s "$work/t.tar.zst") ;;
    rsync) size=$(du -sB1 "$work/out" | cut -f1) ;;
  esac
  describe "$work/out" >"$work/got"
  kept=$(paste -d'|' "$work/want" "$work/got" | awk -F'|' '{split($1, w, " "); \
    printf "%s%s ", w[1], ($1 == $2 ? "" : "(NO: " $2 ")")}')
  printf '%-10s %10s %10s %14s  %s\n' "$tool" "$(median <"$work/save-times")" \
    "$(median <"$work/restore-times")" "$size" "$kept"
done
echo "(rsync's time is its one copy, shown as save; its bytes are the copy's allocation)"

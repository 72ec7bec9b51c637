# Sourced by save-vs-peers.sh --encrypted, with $dir, $runs, $work, $beamsave and lib.sh's
# helpers set: beamsave's save and restore of $dir with and without encryption, and restic's
# encrypted backup and restore, interleaved after a warm-up of each, each run from scratch
# (restic into a new repository, so that it never deduplicates against an earlier run).

have_restic=false
command -v restic >/dev/null && have_restic=true
$have_restic || echo "restic is not installed (apt-get install restic): measured without it" >&2
"$beamsave" keygen --identity "$work/id" >"$work/id.pub" 2>/dev/null
export RESTIC_PASSWORD=bench-password-not-a-secret

save_plain() {
  rm -f "$work/plain.bsave"
  measure "$beamsave" save --library "$dir" --image "$work/plain.bsave" --codec zstd:3 \
    --quiet --report-json "$work/report.json"
}

save_encrypted() {
  rm -f "$work/sealed.bsave"
  measure "$beamsave" save --library "$dir" --image "$work/sealed.bsave" --codec zstd:3 \
    --recipient "$work/id.pub" --quiet
}

save_restic() {
  rm -rf "$work/restic"
  # restic's default compression (zstd, "auto") on a repository of format 2.
  measure bash -c "restic -r '$work/restic' init --repository-version 2 -q &&
    restic -r '$work/restic' backup -q '$dir'"
}

restore_plain() {
  rm -rf "$work/r-plain"
  measure "$beamsave" restore "$work/plain.bsave" --target "$work/r-plain" --quiet
}

restore_encrypted() {
  rm -rf "$work/r-sealed"
  measure "$beamsave" restore "$work/sealed.bsave" --target "$work/r-sealed" \
    --identity "$work/id" --quiet
}

restore_restic() {
  rm -rf "$work/r-restic"
  measure restic -r "$work/restic" restore latest --target "$work/r-restic" -q
}

# Runs each of the named steps once per round, rotating which goes first, and keeps each one's
# "seconds rss" lines in $work/<step>.txt.
rounds() {
  local steps=("$@") i k n=${#@} line
  for s in "${steps[@]}"; do : >"$work/$s.txt"; done
  printf '%-4s' run
  for s in "${steps[@]}"; do printf ' %17s' "$s"; done
  printf '\n'
  for i in $(seq 1 "$runs"); do
    declare -A got=()
    for k in $(seq 0 $((n - 1))); do
      s=${steps[$(((i + k) % n))]}
      sync
      line=$("$s")
      got[$s]=$line
      echo "$line" >>"$work/$s.txt"
    done
    printf '%-4s' "$i"
    for s in "${steps[@]}"; do printf ' %17s' "${got[$s]% *}"; done
    printf '\n'
    unset got
  done
}

med() { cut -d' ' -f1 "$work/$1.txt" | median; }
rss() { cut -d' ' -f2 "$work/$1.txt" | sort -g | tail -n 1; }

saves=(save_plain save_encrypted)
restores=(restore_plain restore_encrypted)
if $have_restic; then
  saves+=(save_restic)
  restores+=(restore_restic)
fi

echo "warm-up (builds the jar and its class-data archive on first use)..." >&2
for s in "${saves[@]}" "${restores[@]}"; do "$s" >/dev/null; done
# Every restore must give the tree that was saved; checked once, outside the clock.
diff -r --no-dereference "$dir" "$work/r-plain" >/dev/null || { echo "the plain restore differs" >&2; exit 1; }
diff -r --no-dereference "$dir" "$work/r-sealed" >/dev/null || { echo "the encrypted restore differs" >&2; exit 1; }

echo "saves:"
rounds "${saves[@]}"
echo "restores:"
rounds "${restores[@]}"

raw=$(sed -n 's/.*"rawBytes" : \([0-9]*\).*/\1/p' "$work/report.json" | head -n 1)
restic_bytes=0
$have_restic && restic_bytes=$(du -sb "$work/restic" | cut -f1)
awk -v raw="$raw" -v runs="$runs" \
    -v sp="$(med save_plain)" -v se="$(med save_encrypted)" \
    -v rp="$(med restore_plain)" -v re="$(med restore_encrypted)" \
    -v sr="$($have_restic && med save_restic || echo 0)" \
    -v rr="$($have_restic && med restore_restic || echo 0)" \
    -v bp="$(stat -c %s "$work/plain.bsave")" -v be="$(stat -c %s "$work/sealed.bsave")" \
    -v br="$restic_bytes" \
    -v msp="$(rss save_plain)" -v mse="$(rss save_encrypted)" \
    -v msr="$($have_restic && rss save_restic || echo 0)" 'BEGIN {
  printf "\nlibrary: %.1f MiB of file data; medians of %d runs after a warm-up\n", raw/1048576, runs
  printf "%-24s %14s %14s %14s\n", "", "beamsave", "beamsave enc.", "restic"
  printf "%-24s %14.2f %14.2f %14s\n", "save: median wall s", sp, se, sr ? sprintf("%.2f", sr) : "-"
  printf "%-24s %14.1f %14.1f %14s\n", "save: MB/s", raw/1e6/sp, raw/1e6/se, sr ? sprintf("%.1f", raw/1e6/sr) : "-"
  printf "%-24s %14.2f %14.2f %14s\n", "restore: median wall s", rp, re, rr ? sprintf("%.2f", rr) : "-"
  printf "%-24s %14.1f %14.1f %14s\n", "restore: MB/s", raw/1e6/rp, raw/1e6/re, rr ? sprintf("%.1f", raw/1e6/rr) : "-"
  printf "%-24s %14d %14d %14s\n", "stored bytes", bp, be, br ? br : "-"
  printf "%-24s %14.0f %14.0f %14s\n", "save peak RSS MiB (max)", msp/1024, mse/1024, msr ? sprintf("%.0f", msr/1024) : "-"
  printf "\nencrypted / plain throughput: save %.2fx, restore %.2fx (target: at least 0.9x)\n", sp/se, rp/re
  if (sr) printf "beamsave encrypted vs restic: save %.2fx, restore %.2fx as fast\n", sr/se, rr/re
}'

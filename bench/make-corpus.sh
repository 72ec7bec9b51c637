#!/usr/bin/env bash
# Builds a benchmark library of mixed real files (text and docs, native binaries, JDK and Maven
# jars that are already compressed) by copying directories most Debian machines with a JDK have.
# usage: bench/make-corpus.sh OUT_DIR [SOURCE_DIR...]
set -euo pipefail
out=${1:?usage: bench/make-corpus.sh OUT_DIR [SOURCE_DIR...]}
shift
sources=("$@")
if [ "${#sources[@]}" -eq 0 ]; then
  sources=(/usr/share /usr/lib/jvm "$HOME/.m2/repository")
fi
mkdir -p "$out"
for s in "${sources[@]}"; do
  [ -d "$s" ] || continue
  name=$(echo "$s" | tr '/' '_' | sed 's/^_//')
  mkdir -p "$out/$name"
  tar -C "$s" -cf - . 2>/dev/null | tar -C "$out/$name" -xf -
done
du -sh --apparent-size "$out"
find "$out" -type f | wc -l | sed 's/$/ files/'

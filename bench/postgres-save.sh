#!/usr/bin/env bash
# What saving a PostgreSQL cluster in backup mode costs: a new cluster (pgbench -i -s SCALE, no
# load) saved with `save --postgres` (pg_backup_start ... pg_backup_stop, the WAL in the image),
# with a plain `save` of the same data directory, and with `pg_basebackup -Ft -z` (gzip'd tar
# over the replication protocol, -X fetch). Wall seconds, medians of RUNS runs after a warm-up,
# and each output's size.
# usage: bench/postgres-save.sh [SCALE] [RUNS]     (SCALE defaults to 10, RUNS to 3)
# Runs as root (the cluster runs as the postgres user); needs PostgreSQL's server
# (apt-get install postgresql) and a built tree (mvn -B package). BENCH_WORK picks the scratch
# directory.
set -euo pipefail
scale=${1:-10}
runs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
beamsave=${BEAMSAVE:-$here/beamsave}
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
needs postgresql "$bin/initdb" pgbench psql pg_basebackup
[ "$(id -u)" = 0 ] || { echo "run as root: the cluster runs as the postgres user" >&2; exit 1; }
work=$(mktemp -d "${BENCH_WORK:-/tmp}/beamsave-postgres-bench.XXXXXX")
chmod 755 "$work"
mkdir "$work/pg" "$work/out"
chown postgres "$work/pg" "$work/out"
as_pg() { runuser -u postgres -- "$@"; }
trap 'as_pg "$bin/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$bin/initdb" -D "$work/pg/data" -A trust -U postgres >/dev/null
as_pg "$bin/pg_ctl" -D "$work/pg/data" -l "$work/pg/log" -w \
  -o "-p $port -k $work/pg -c listen_addresses=127.0.0.1" start >/dev/null
conn="host=127.0.0.1 port=$port user=postgres dbname=postgres"
pgbench -q -i -s "$scale" -h 127.0.0.1 -p "$port" -U postgres postgres >/dev/null 2>&1
psql -X -q -d "$conn" -c checkpoint
echo "data directory: $(du -sh "$work/pg/data" | cut -f1), pgbench scale $scale" >&2

declare -A times sizes
for round in $(seq 0 "$runs"); do
  rm -rf "$work"/out/*
  t=$(seconds "$beamsave" save --library "$work/pg/data" --image "$work/out/backup.bsave" \
    --postgres "$conn" --quiet)
  sizes[backup]=$(stat -c %s "$work/out/backup.bsave")
  [ "$round" = 0 ] || times[backup]+="$t"$'\n'
  t=$(seconds "$beamsave" save --library "$work/pg/data" --image "$work/out/plain.bsave" \
    --exclude /postmaster.pid --quiet)
  sizes[plain]=$(stat -c %s "$work/out/plain.bsave")
  [ "$round" = 0 ] || times[plain]+="$t"$'\n'
  t=$(seconds as_pg pg_basebackup -h 127.0.0.1 -p "$port" -U postgres -D "$work/out/base" \
    -Ft -z -X fetch)
  sizes[basebackup]=$(du -sb "$work/out/base" | cut -f1)
  [ "$round" = 0 ] || times[basebackup]+="$t"$'\n'
  echo "round $round done" >&2
done
printf '%-36s %10s %12s\n' "way" "median s" "bytes"
printf '%-36s %10s %12s\n' "save --postgres (backup mode)" \
  "$(printf '%s' "${times[backup]}" | median)" "${sizes[backup]}"
printf '%-36s %10s %12s\n' "save (no --postgres)" \
  "$(printf '%s' "${times[plain]}" | median)" "${sizes[plain]}"
printf '%-36s %10s %12s\n' "pg_basebackup -Ft -z -X fetch" \
  "$(printf '%s' "${times[basebackup]}" | median)" "${sizes[basebackup]}"

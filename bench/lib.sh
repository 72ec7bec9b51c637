# Sourced by the benchmarks, which set $here (the project) and, before calling what uses it,
# $work (a scratch directory).

# Exits naming the Debian packages ($1) unless every other argument is a command here.
needs() {
  local packages=$1 tool
  shift
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install $packages)" >&2; exit 1; }
  done
}

# Runs a command with its output discarded and prints its wall time in seconds; on failure,
# prints its stderr and exits.
seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# Runs a command with its output discarded and prints its wall seconds and peak RSS (KiB), from
# GNU time.
measure() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null
  cat "$work/time"
}

# The median of the numbers on stdin, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# With STORE_CPUS (a taskset list such as "1"), S3Proxy runs on those CPUs only, and
# $client_cpus names the others and "${client_cmd[@]}" pins a client command to them; otherwise
# both are empty and S3Proxy shares every CPU with the client.
store_pinning() {
  store_cmd=() client_cmd=() client_cpus=
  [ -n "${STORE_CPUS:-}" ] || return 0
  client_cpus=$(python3 - "$STORE_CPUS" <<'PY'
import os, sys
store = set()
for part in sys.argv[1].split(","):
    lo, _, hi = part.partition("-")
    store.update(range(int(lo), int(hi or lo) + 1))
client = sorted(os.sched_getaffinity(0) - store)
if not client or not store <= os.sched_getaffinity(0):
    sys.exit("STORE_CPUS=%s leaves no CPU for the client or names one this process cannot use" % sys.argv[1])
print(",".join(map(str, client)))
PY
) || exit 1
  store_cmd=(taskset -c "$STORE_CPUS")
  client_cmd=(taskset -c "$client_cpus")
}

# Starts S3Proxy (filesystem backend, under $work/s3) on a free loopback port with identity
# "bench" / "bench-secret", creates the buckets named as arguments, and sets $endpoint.
start_s3proxy() {
  store_pinning
  [ -f "$here/pipelines/target/s3proxy.jar" ] || (cd "$here" && mvn -q -B package -DskipTests)
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  endpoint=http://127.0.0.1:$port
  for bucket in "$@"; do mkdir -p "$work/s3/$bucket"; done
  cat >"$work/s3proxy.properties" <<PROPS
s3proxy.endpoint=$endpoint
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=bench
s3proxy.credential=bench-secret
s3proxy.ignore-unknown-headers=true
jclouds.provider=filesystem
jclouds.filesystem.basedir=$work/s3
jclouds.identity=unused
jclouds.credential=unused
PROPS
  "${store_cmd[@]}" java -jar "$here/pipelines/target/s3proxy.jar" --properties "$work/s3proxy.properties" \
    >"$work/s3proxy.log" 2>&1 &
  s3proxy_pid=$!
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.2
  done
  echo "S3Proxy did not start; see $work/s3proxy.log" >&2
  return 1
}

stop_s3proxy() {
  if [ -n "${s3proxy_pid:-}" ]; then
    kill "$s3proxy_pid" 2>/dev/null || true
    wait "$s3proxy_pid" 2>/dev/null || true
  fi
}

# Points awscli at the S3Proxy start_s3proxy started: its credentials, and bodies it accepts
# (it rejects the newer SDKs' default aws-chunked bodies with trailing checksums).
aws_for_s3proxy() {
  export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_DEFAULT_REGION=us-east-1
  export AWS_REQUEST_CHECKSUM_CALCULATION=when_required AWS_RESPONSE_CHECKSUM_VALIDATION=when_required
  unset AWS_CA_BUNDLE
}

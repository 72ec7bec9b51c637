# Sourced by start-cluster.sh and add-taskmanager.sh, which set $here (this directory), $dir (the
# cluster's directory) and $cp (its classpath): starts Flink processes the way Flink's own scripts
# do, each recorded in $dir/pids.

# What Flink's own scripts pass on Java 17 (the beamsave launcher uses the same list).
mapfile -t opens <"$here/jvm-opens"

# Flink derives the JVM memory flags and its dynamic properties from the config, as its
# scripts do: line 1 of the result is JVM flags, line 2 the -D properties for the entrypoint.
memory() {
  java -cp "$cp" org.apache.flink.runtime.util.bash.BashJavaUtils "$1" --configDir "$dir/conf" \
    2>/dev/null | sed -n 's/^BASH_JAVA_UTILS_EXEC_RESULT://p'
}

start() { # NAME MAIN-CLASS RESOURCE-QUERY ARGS...
  local name=$1 main=$2 query=$3 jvm props
  shift 3
  mapfile -t lines < <(memory "$query")
  [ "${#lines[@]}" -ge 2 ] || { echo "start-cluster: Flink gave no memory settings for $name" >&2; exit 1; }
  read -r -a jvm <<<"${lines[0]}"
  read -r -a props <<<"${lines[1]}"
  # shellcheck disable=SC2086
  nohup java "${jvm[@]}" "${opens[@]}" -Djava.io.tmpdir="$dir/tmp" \
    -Dlog.file="$dir/log/$name.log" -Dlog4j.configurationFile="file:$dir/conf/log4j.properties" \
    -cp "$cp" "$main" --configDir "$dir/conf" "$@" "${props[@]}" \
    >"$dir/log/$name.out" 2>&1 </dev/null &
  echo $! >>"$dir/pids"
}

# GET http://127.0.0.1:$rest_port$1 from the cluster's REST API: with curl where there is one,
# else with bash's /dev/tcp (a release needs nothing but Java); empty when it does not answer.
rest_get() {
  if command -v curl >/dev/null; then
    curl -fsS --max-time 5 "http://127.0.0.1:$rest_port$1" 2>/dev/null || true
  else
    timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" \
        && printf "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" "$1" >&3 \
        && head -c 65536 <&3' "$rest_port" "$1" 2>/dev/null | sed '1,/^\r\{0,1\}$/d' || true
  fi
}

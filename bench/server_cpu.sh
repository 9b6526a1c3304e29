# shellcheck shell=bash
# Sourced by bench/cpu_per_append.sh and bench/cpu_per_read.sh: a server started on a fresh data
# directory, its CPU time, and the cleanup on exit. Sets $tmp (a temporary directory, removed on
# exit with the server still running, if any), $server (the pid), $url and $ticks. Reads $root (the
# checkout) from the script that sources it.
# shellcheck disable=SC2154 # $root is the sourcing script's

tmp=$(mktemp -d "/tmp/$(basename "$0" .sh)-XXXXXX")
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# start_server daemon|floor|reference [BIN]: starts a server on a fresh $tmp/data and a free
# loopback port: the daemon BIN with `serve` and the options of DAEMON_ARGS, the floor BIN
# (bench/append_floor), or the reference Durable Streams server (npm @durable-streams/server,
# file-backed, tests/conformance/reference-server.mjs; `npm ci` in tests/conformance first).
start_server() {
  local side=$1 bin=${2:-} out="$tmp/$1.out" line=""
  rm -rf "$tmp/data" && mkdir -p "$tmp/data"
  case $side in
    daemon)
      # shellcheck disable=SC2086 # DAEMON_ARGS is split into its options on purpose
      "$bin" --data "$tmp/data" serve --listen 127.0.0.1:0 --log-level warn ${DAEMON_ARGS:-} \
        >"$out" 2>&1 &
      ;;
    floor) "$bin" --port 0 --db "$tmp/data/floor.db" >"$out" 2>&1 & ;;
    reference)
      (cd "$root/tests/conformance" && exec node reference-server.mjs 0 "$tmp/data" >"$out" 2>&1) &
      ;;
  esac
  server=$!
  url=""
  for _ in $(seq 1 300); do
    case $side in
      daemon)
        line=$(grep -o 'serving on http://[^ ]*' "$out" | head -n 1) || true
        url=${line#serving on }
        ;;
      floor)
        line=$(grep -o '^listening [0-9]*' "$out" | head -n 1) || true
        [ -n "$line" ] && url="http://127.0.0.1:${line#listening }"
        ;;
      reference)
        line=$(grep -o '^reference server on http://[^ ]*' "$out" | head -n 1) || true
        url=${line#reference server on }
        ;;
    esac
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "$side did not start" >&2; cat "$out" >&2; exit 1; }
}

stop_server() {
  kill "$server"
  wait "$server" || echo "the server exited with status $?" >&2
  server=""
  rm -rf "$tmp/data"
}

# utime + stime of the server, in clock ticks (fields 14 and 15; the name in field 2 may hold
# spaces, so the fields are counted after its closing parenthesis).
# shellcheck disable=SC2034 # read by the scripts that source this file
ticks=$(getconf CLK_TCK)  # per second
cpu_ticks() { sed 's/^.*) //' "/proc/$server/stat" | awk '{ print $12 + $13 }'; }

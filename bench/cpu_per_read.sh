#!/usr/bin/env bash
# CPU per catch-up read of a large generic Durable Stream: the daemon (`agentstream serve`,
# SQLite) holds one octet-stream stream of MESSAGES messages of MESSAGE_BYTES bytes each, and
# `wrk` reads it from the start (`GET /v1/stream/big?offset=-1`) over CONNECTIONS connections for
# DURATION. Each answer is one catch-up response, cut at the store's max_read_bytes (1 MiB by
# default: docs/operations.md). Prints reads/s, the bytes of one answer, and the daemon's CPU time
# (utime + stime of /proc/PID/stat) per read. With several binaries, they run alternately, R
# rounds, each on a fresh data directory.
#
# Builds nothing. Usage:
#   bench/cpu_per_read.sh DAEMON_BIN [DAEMON_BIN...]
# with R (rounds, default 3), DURATION (default 8s), CONNECTIONS (default 8), MESSAGES (default
# 256) and MESSAGE_BYTES (default 4096) from the environment.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DAEMON_BIN [DAEMON_BIN...]" >&2; exit 2; }
rounds=${R:-3}
duration=${DURATION:-8s}
connections=${CONNECTIONS:-8}
messages=${MESSAGES:-256}
message_bytes=${MESSAGE_BYTES:-4096}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 2; }
for bin in "$@"; do [ -x "$bin" ] || { echo "no daemon binary at $bin" >&2; exit 2; }; done
ticks=$(getconf CLK_TCK)
tmp=$(mktemp -d /tmp/cpu-per-read-XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
head -c "$message_bytes" /dev/zero | tr '\0' 'x' >"$tmp/message"

# utime + stime of the server in clock ticks (the fields after the name's closing parenthesis).
cpu_ticks() { sed 's/^.*) //' "/proc/$server/stat" | awk '{ print $12 + $13 }'; }

# Starts BIN on a fresh data directory, fills the stream, runs wrk; prints one line.
measure() {
  local bin=$1 url="" line before after report rate reads bytes
  rm -rf "$tmp/data" && mkdir -p "$tmp/data"
  "$bin" --data "$tmp/data" serve --listen 127.0.0.1:0 --log-level warn >"$tmp/out" 2>&1 &
  server=$!
  for _ in $(seq 1 300); do
    line=$(grep -o 'serving on http://[^ ]*' "$tmp/out" | head -n 1) || true
    url=${line#serving on }
    [ -n "$url" ] && break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "the daemon did not start" >&2; cat "$tmp/out" >&2; exit 1; }
  curl -sf -X PUT -H 'Content-Type: application/octet-stream' -o /dev/null "$url/v1/stream/big"
  # One curl process, MESSAGES requests on one connection.
  local args=()
  for _ in $(seq 1 "$messages"); do
    args+=(-X POST --data-binary "@$tmp/message" -H 'Content-Type: application/octet-stream'
      -o /dev/null -w '%{http_code}\n' "$url/v1/stream/big" --next)
  done
  unset 'args[${#args[@]}-1]'
  if curl -s "${args[@]}" | grep -qv '^2'; then echo "appending failed" >&2; exit 1; fi
  bytes=$(curl -sf "$url/v1/stream/big?offset=-1" | wc -c)
  before=$(cpu_ticks)
  report=$(wrk -t2 -c"$connections" -d"$duration" "$url/v1/stream/big?offset=-1")
  after=$(cpu_ticks)
  kill "$server"
  wait "$server" || echo "the daemon exited with status $?" >&2
  server=""
  if grep -q 'Non-2xx' <<<"$report"; then echo "wrk saw errors: $report" >&2; exit 1; fi
  rate=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$report")
  reads=$(awk '/ requests in / { print $1 }' <<<"$report")
  awk -v bin="$bin" -v rate="$rate" -v n="$reads" -v bytes="$bytes" -v t="$((after - before))" \
    -v hz="$ticks" 'BEGIN { printf "%s: %.0f reads/s of %d bytes, %.1f CPU us/read\n",
      bin, rate, bytes, (n > 0 ? t * 1e6 / hz / n : 0) }'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); wrk -t2 -c$connections, $duration"
for round in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    printf 'round %d, ' "$round"
    measure "$bin"
  done
done

#!/usr/bin/env bash
# CPU per catch-up read of a large generic Durable Stream: the daemon (`agentstream serve`,
# SQLite) holds one octet-stream stream of MESSAGES messages of MESSAGE_BYTES bytes each, and
# `wrk` reads it from the start (`GET /v1/stream/big?offset=-1`) over CONNECTIONS connections for
# DURATION. Each answer is one catch-up response, cut at the store's max_read_bytes (1 MiB by
# default: docs/operations.md). Prints reads/s, the bytes of one answer, and the daemon's CPU time
# (utime + stime of /proc/PID/stat) per read. With several binaries, they run alternately, R
# rounds, each on a fresh data directory (bench/server_cpu.sh).
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
# shellcheck source=bench/server_cpu.sh
source "$(dirname "$0")/server_cpu.sh"
head -c "$message_bytes" /dev/zero | tr '\0' 'x' >"$tmp/message"

# Starts BIN on a fresh data directory, fills the stream, runs wrk; prints one line.
measure() {
  local bin=$1 before after report rate reads bytes
  start_server daemon "$bin"
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
  stop_server
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

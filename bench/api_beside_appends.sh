#!/usr/bin/env bash
# Durable Streams appends while other clients read a session's pages through the /v1 API: the
# appends' latency (wrk --latency, bench/append_load.lua over APPENDERS connections) with and
# without READERS connections reading `GET /v1/agents/ID/events?offset=-1` as fast as they can,
# and the pages read per second. A page that waits on the store (a PostgreSQL round trip) must
# not hold up the appends of the connections that share its I/O thread.
#
# The daemon (`agentstream serve`, DAEMON_ARGS added) starts on a fresh data directory, with its
# store in SQLite, or with STORE=postgresql://... in a fresh database of that server (created
# and dropped with psql). One session of the scripted agent (three turns) is the one read; 100
# JSON streams take the appends. With several binaries, they run alternately, R rounds.
#
# Builds nothing. Usage:
#   bench/api_beside_appends.sh DAEMON_BIN [DAEMON_BIN...]
# with R (rounds, default 3), DURATION (of each wrk run, default 8s), APPENDERS (default 8),
# READERS (default 4) and STORE from the environment.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 DAEMON_BIN [DAEMON_BIN...]" >&2; exit 2; }
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds=${R:-3}
duration=${DURATION:-8s}
appenders=${APPENDERS:-8}
readers=${READERS:-4}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 2; }
for bin in "$@"; do [ -x "$bin" ] || { echo "no daemon binary at $bin" >&2; exit 2; }; done
# shellcheck source=bench/server_cpu.sh
source "$root/bench/server_cpu.sh"
database=""
drop_database() {
  [ -n "$database" ] && psql -q "$STORE" -c "DROP DATABASE IF EXISTS $database" >/dev/null
  database=""
}
trap 'cleanup; drop_database' EXIT

# Starts BIN on a fresh data directory (and database).
start() {
  local bin=$1 store_args=""
  if [ -n "${STORE:-}" ]; then
    drop_database
    database="api_beside_appends_$$"
    psql -q "$STORE" -c "CREATE DATABASE $database" >/dev/null
    store_args="--store ${STORE%/*}/$database"
  fi
  DAEMON_ARGS="${DAEMON_ARGS:-} $store_args" start_server daemon "$bin"
}

# Creates the 100 streams and the session; sets $page (the page's URL).
prepare() {
  local urls=() id
  for k in $(seq 0 99); do urls+=("$url/v1/stream/bench-$k"); done
  curl -sf -X PUT -H 'Content-Type: application/json' -o /dev/null "${urls[@]}"
  id=$(curl -sf -X POST -H 'Content-Type: application/json' \
    -d '{"provider":"scripted","cwd":"/tmp"}' "$url/v1/agents" | grep -o '"id":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  for turn in 1 2 3; do
    curl -sf -X POST -H 'Content-Type: application/json' \
      -d "{\"text\":\"turn $turn\",\"clientMessageId\":\"m$turn\"}" \
      -o /dev/null "$url/v1/agents/$id/messages"
  done
  local snapshot
  for _ in $(seq 1 300); do
    snapshot=$(curl -sf "$url/v1/agents/$id")
    grep -q '"status":"idle"' <<<"$snapshot" && grep -q '"activeTurn":null' <<<"$snapshot" &&
      grep -q '"queue":\[\]' <<<"$snapshot" && break
    sleep 0.1
  done
  page="$url/v1/agents/$id/events?offset=-1"
}

# Appends for DURATION, with READERS page readers alongside when $1 is "with"; prints a line.
appends() {
  local mode=$1 report reads="" p50 p99 rate
  if [ "$mode" = with ]; then
    wrk -t1 -c"$readers" -d"$duration" "$page" >"$tmp/pages.out" &
    reads=$!
  fi
  report=$(wrk -t1 -c"$appenders" -d"$duration" --latency -s "$root/bench/append_load.lua" "$url")
  [ -z "$reads" ] || wait "$reads"
  rate=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$report")
  p50=$(awk '$1 == "50%" { print $2 }' <<<"$report")
  p99=$(awk '$1 == "99%" { print $2 }' <<<"$report")
  printf '  appends %s readers: %s/s, p50 %s, p99 %s' "$mode" "$rate" "$p50" "$p99"
  [ "$mode" = with ] && printf ', pages %s/s' "$(awk '/^Requests\/sec:/ { print $2 }' "$tmp/pages.out")"
  printf '\n'
}

for round in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    start "$bin"
    prepare
    echo "round $round, $bin"
    appends without
    appends with
    stop_server
  done
done

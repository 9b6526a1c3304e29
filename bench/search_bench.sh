#!/usr/bin/env bash
# Search on a session of N events (docs/benchmarks.md, "Search"): gen_long_session writes one
# session of N events (default 10,000,000) into a fresh store (SQLite in a fresh data directory,
# or a fresh database of the PostgreSQL server AGENTSTREAM_BENCH_PG names with --postgres); the
# release daemon starts on it and indexes it (the time of the first query naming the agent, which
# brings its index up to the tail, is "index"); then each query shape runs once ("first": the
# first time this daemon reads those words) and ROUNDS times more over HTTP (curl on the same
# machine: the figures include a request's own cost, about 1 ms), and the median and the slowest
# of the ROUNDS are printed, with the hits of the last round.
# --slices=K1,K2,... measures the same store once per value of `serve --search-slices` (the
# connections one search runs on at once), restarting the daemon on it between them, and repeats
# the list twice (K1 K2 K1 K2), so that a change of the machine's load during the run shows.
# Builds nothing: takes a build directory configured with AGENTSTREAM_BUILD_BENCHMARKS=ON in which
# `agentstream` and `gen_long_session` are built (use a release build).
# Usage: bench/search_bench.sh BUILD_DIR [EVENTS] [ROUNDS] [--postgres] [--slices=K1,K2,...]
set -euo pipefail
usage="usage: search_bench.sh BUILD_DIR [EVENTS] [ROUNDS] [--postgres] [--slices=K1,K2,...]"
build=$(realpath "${1:?$usage}")
events=10000000
rounds=20
store=sqlite
slices=()
n=0
for arg in "${@:2}"; do
  case "$arg" in
    --postgres) store=postgresql ;;
    --slices=*) IFS=, read -r -a slices <<<"${arg#--slices=}" ;;
    *[!0-9]* | "") echo "unknown argument $arg" >&2; exit 2 ;;
    *) if [ $n -eq 0 ]; then events=$arg; else rounds=$arg; fi; n=$((n + 1)) ;;
  esac
done
bin="$build/src/cli/agentstream"
gen="$build/bench/gen_long_session"
if [ ! -x "$bin" ] || [ ! -x "$gen" ]; then
  echo "build agentstream and gen_long_session in $build" >&2
  exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-search.XXXXXX")
pg_db=""
daemon=""
cleanup() {
  if [ -n "$daemon" ]; then
    kill "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
  fi
  if [ -n "$pg_db" ]; then
    psql "$AGENTSTREAM_BENCH_PG" -qAt -c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
store_args=()
if [ "$store" = postgresql ]; then
  [[ ${AGENTSTREAM_BENCH_PG:-} =~ ^(postgres(ql)?://[^/?]*)(/[^?]*)?(\?.*)?$ ]] ||
    { echo "--postgres needs AGENTSTREAM_BENCH_PG (a postgresql:// URL)" >&2; exit 2; }
  pg_db="search_$$"
  psql "$AGENTSTREAM_BENCH_PG" -qAt -c "CREATE DATABASE $pg_db" >/dev/null
  store_args=(--store "${BASH_REMATCH[1]}/$pg_db${BASH_REMATCH[4]}")
fi

line=$("$gen" --data "$tmp" --events "$events" "${store_args[@]}")
session=$(awk '{print $2}' <<<"$line")
turns=$(awk '{print $6}' <<<"$line")
echo "generated: $line"
# Starts the daemon (with --search-slices $1 unless it is empty) and sets $url.
start_daemon() {
  local slice_args=()
  [ -n "$1" ] && slice_args=(--search-slices "$1")
  "$bin" --data "$tmp" "${store_args[@]}" serve --listen 127.0.0.1:0 --log-level warn \
    "${slice_args[@]}" >"$tmp/daemon.log" 2>&1 &
  daemon=$!
  url=""
  for _ in $(seq 1 600); do
    url=$(grep -o 'serving on http://[^ ]*' "$tmp/daemon.log" | head -n 1 | cut -d' ' -f3) || true
    [ -n "${url:-}" ] && break
    sleep 0.1
  done
  [ -n "${url:-}" ] || { echo "the daemon did not start" >&2; cat "$tmp/daemon.log" >&2; exit 1; }
}
stop_daemon() {
  kill "$daemon" 2>/dev/null || true
  wait "$daemon" 2>/dev/null || true
  daemon=""
}

# Waits (at most 120 s) until the machine is idle: under 5% of its CPU time busy over one second.
# The indexer's last commits, the WAL checkpoint after them or PostgreSQL's autovacuum would
# otherwise share the cores with the first queries.
busy_jiffies() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
settle() {
  local b0 t0 b1 t1
  for _ in $(seq 1 120); do
    read -r b0 t0 < <(busy_jiffies)
    sleep 1
    read -r b1 t1 < <(busy_jiffies)
    [ $(((b1 - b0) * 100)) -le $(((t1 - t0) * 5)) ] && return 0
  done
  echo "the machine did not settle in 120 s" >&2
}

seconds() { curl -s -o "$tmp/reply" -w '%{time_total}' "$url/v1/search?$1"; }

# A word of one user message near the start (turn 123), one near the end, a word of every
# assistant message, two words of every user message, two words never in one document (every
# match of each must be passed over), a word in no document, and one session's hits.
recent=$((turns - 5))
shapes=(
  "rare-old q=123"
  "rare-new q=$recent"
  "common q=fixture"
  "common-pair q=restart+reopen"
  "disjoint-pair q=fixture+ctest"
  "absent q=zyzzyvaqq"
  "common-one-agent q=fixture&agent=$session"
)
measure() {
  printf '%-18s %8s %9s %8s %6s\n' shape first_ms median_ms max_ms hits
  for shape in "${shapes[@]}"; do
    name=${shape%% *}
    query=${shape#* }
    local once
    once=$(seconds "$query&limit=20")
    times=()
    for _ in $(seq 1 "$rounds"); do times+=("$(seconds "$query&limit=20")"); done
    hits=$({ grep -o '"agent":' "$tmp/reply" || true; } | wc -l)
    mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -g)
    median=${sorted[$((rounds / 2))]}
    max=${sorted[$((rounds - 1))]}
    awk -v n="$name" -v f="$once" -v m="$median" -v x="$max" -v h="$hits" \
      'BEGIN { printf "%-18s %8.2f %9.2f %8.2f %6s\n", n, f * 1000, m * 1000, x * 1000, h }'
  done
}

if [ ${#slices[@]} -eq 0 ]; then
  start_daemon ""
  index=$(seconds "q=fixture&agent=$session&limit=1")
  printf 'store %s events %s turns %s index %.1f s\n' "$store" "$events" "$turns" "$index"
  settle
  measure
  exit 0
fi
first=1
for k in "${slices[@]}" "${slices[@]}"; do
  start_daemon "$k"
  # The first daemon indexes the session; the later ones find it indexed.
  index=$(seconds "q=fixture&agent=$session&limit=1")
  if [ $first -eq 1 ]; then
    printf 'store %s events %s turns %s index %.1f s\n' "$store" "$events" "$turns" "$index"
    first=0
  fi
  settle
  printf -- '--search-slices %s, %s, load average %s\n' "$k" "$(date -u +%H:%M:%S)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  measure
  stop_daemon
done

#!/usr/bin/env bash
# Generic Durable Streams, side by side: the daemon and the reference server (npm
# @durable-streams/server 0.3.7, file-backed), on this machine in the same run, measured by the
# same load tool (bench/streams_load.cc), alternately, ROUNDS times. Builds nothing: takes a build
# directory configured with AGENTSTREAM_BUILD_BENCHMARKS=ON in which `agentstream` and
# `streams_load` are built (use a release build).
# With AGENTSTREAM_BENCH_PG (a postgresql:// URL of a server, e.g. from tools/pg_test_cluster.sh)
# a third daemon keeps its streams in PostgreSQL (a database of the run's own, dropped at exit)
# and is measured in the same rounds; each round then prints its figures over the SQLite
# daemon's.
# Usage: tools/bench_streams.sh BUILD_DIR [SECONDS] [ROUNDS]
set -euo pipefail
build=$(realpath "${1:?usage: bench_streams.sh BUILD_DIR [SECONDS] [ROUNDS]}")
seconds=${2:-5}
rounds=${3:-1}
bin="$build/src/cli/agentstream"
load="$build/bench/streams_load"
[ -x "$bin" ] && [ -x "$load" ] || { echo "build agentstream and streams_load in $build" >&2; exit 2; }
dir="$(cd "$(dirname "$0")/.." && pwd)/tests/conformance"
tmp=$(mktemp -d)
pids=()
pg_db=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ -n "$pg_db" ]; then
    psql "$AGENTSTREAM_BENCH_PG" -qAt -c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" >/dev/null 2>&1 ||
      echo "bench: could not drop database $pg_db" >&2
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
"$bin" --data "$tmp/daemon" serve --listen 127.0.0.1:0 ${DAEMON_ARGS:-} >"$tmp/daemon.out" 2>&1 &
pids+=($!)
(cd "$dir" && exec node reference-server.mjs 0 "$tmp/reference" 30000 >"$tmp/reference.out" 2>&1) &
pids+=($!)
if [ -n "${AGENTSTREAM_BENCH_PG:-}" ]; then
  [[ $AGENTSTREAM_BENCH_PG =~ ^(postgres(ql)?://[^/?]*)(/[^?]*)?(\?.*)?$ ]] ||
    { echo "AGENTSTREAM_BENCH_PG is not a postgresql:// URL" >&2; exit 2; }
  pg_db="bench_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  psql "$AGENTSTREAM_BENCH_PG" -v ON_ERROR_STOP=1 -qAt -c "CREATE DATABASE $pg_db" >/dev/null
  "$bin" --data "$tmp/postgres" --store "${BASH_REMATCH[1]}/$pg_db${BASH_REMATCH[4]}" serve \
    --listen 127.0.0.1:0 ${DAEMON_ARGS:-} >"$tmp/postgres.out" 2>&1 &
  pids+=($!)
fi
daemon="" reference=""
for _ in $(seq 1 100); do
  daemon=$(sed -n 's/^agentstream: serving on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/daemon.out" 2>/dev/null || true)
  reference=$(sed -n 's/^reference server on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/reference.out" 2>/dev/null || true)
  postgres=$(sed -n 's/^agentstream: serving on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/postgres.out" 2>/dev/null || true)
  [ -n "$daemon" ] && [ -n "$reference" ] && { [ -z "$pg_db" ] || [ -n "$postgres" ]; } && break
  sleep 0.1
done
[ -n "$daemon" ] && [ -n "$reference" ] && { [ -z "$pg_db" ] || [ -n "$postgres" ]; } ||
  { cat "$tmp"/*.out >&2; exit 1; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# postgres / sqlite of each append figure, and the latencies side by side.
ratio() {
  node -e '
const [s, p] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2])];
const n = (v) => (typeof v === "number" ? v : v.per_s);
const out = [];
for (const k of ["appends_per_s_1_client", "appends_per_s_32_clients"])
  out.push(`${k} ${(n(p[k]) / n(s[k])).toFixed(2)}`);
for (const k of ["sse_1_subscriber", "sse_100_subscribers"])
  out.push(`${k} p50 ${p[k].p50_us} vs ${s[k].p50_us} us`);
console.log(out.join(", "));
' "$1" "$2"
}
for round in $(seq 1 "$rounds"); do
  sqlite_figures=$("$load" --url "$daemon/v1/stream" --seconds "$seconds")
  echo "round $round agentstream: $sqlite_figures"
  echo "round $round reference:   $("$load" --url "$reference/v1/stream" --seconds "$seconds")"
  if [ -n "$pg_db" ]; then
    pg_figures=$("$load" --url "$postgres/v1/stream" --seconds "$seconds")
    echo "round $round postgres:    $pg_figures"
    echo "round $round postgres/sqlite: $(ratio "$sqlite_figures" "$pg_figures")"
  fi
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Generic Durable Streams, side by side: the daemon and the reference server (npm
# @durable-streams/server 0.3.7, file-backed), on this machine in the same run, measured by the
# same load tool (bench/streams_load.cc), alternately, ROUNDS times. Builds nothing: takes a build
# directory configured with AGENTSTREAM_BUILD_BENCHMARKS=ON in which `agentstream` and
# `streams_load` are built (use a release build).
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
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
"$bin" --data "$tmp/daemon" serve --listen 127.0.0.1:0 ${DAEMON_ARGS:-} >"$tmp/daemon.out" 2>&1 &
pids+=($!)
(cd "$dir" && exec node reference-server.mjs 0 "$tmp/reference" 30000 >"$tmp/reference.out" 2>&1) &
pids+=($!)
daemon="" reference=""
for _ in $(seq 1 100); do
  daemon=$(sed -n 's/^agentstream: serving on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/daemon.out" 2>/dev/null || true)
  reference=$(sed -n 's/^reference server on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/reference.out" 2>/dev/null || true)
  [ -n "$daemon" ] && [ -n "$reference" ] && break
  sleep 0.1
done
[ -n "$daemon" ] && [ -n "$reference" ] || { cat "$tmp"/*.out >&2; exit 1; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$rounds"); do
  echo "round $round agentstream: $("$load" --url "$daemon/v1/stream" --seconds "$seconds")"
  echo "round $round reference:   $("$load" --url "$reference/v1/stream" --seconds "$seconds")"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

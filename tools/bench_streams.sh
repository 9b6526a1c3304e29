#!/usr/bin/env bash
# Generic Durable Streams, side by side: the daemon and the reference server (npm
# @durable-streams/server 0.3.7, file-backed), on this machine in the same run, measured by the
# same load tool (tests/conformance/bench.mjs). Builds nothing: takes the agentstream binary
# (use a release build).
# Usage: tools/bench_streams.sh AGENTSTREAM_BINARY [SECONDS]
set -euo pipefail
bin=$(realpath "${1:?usage: bench_streams.sh AGENTSTREAM_BINARY [SECONDS]}")
seconds=${2:-10}
dir="$(cd "$(dirname "$0")/.." && pwd)/tests/conformance"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
"$bin" --data "$tmp/daemon" serve --listen 127.0.0.1:0 >"$tmp/daemon.out" 2>&1 &
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
echo "agentstream: $(cd "$dir" && node bench.mjs "$daemon" "$seconds")"
echo "reference:   $(cd "$dir" && node bench.mjs "$reference" "$seconds")"

#!/usr/bin/env bash
# Same-run A/B of the session-log benchmarks between two release builds (docs/benchmarks.md,
# "Same-run A/B"): log_bench's page reads and idle-session memory, and log_load's appends per
# second with `--durability os` (no fsync: the CPU cost of the same round trips, which the code
# decides, and not the disk's, which it does not). The two builds run in turns, ROUNDS times each,
# so that a machine that gets busier or quieter meanwhile weighs on both alike.
# Builds nothing: each BUILD_DIR must hold bench/log_bench and bench/log_load (a release build
# configured with AGENTSTREAM_BUILD_BENCHMARKS=ON; for an older commit, a git worktree of it).
# Usage: bench/ab_log_benchmarks.sh A_BUILD_DIR B_BUILD_DIR [ROUNDS] [SECONDS]
set -euo pipefail
a=$(realpath "${1:?usage: ab_log_benchmarks.sh A_BUILD_DIR B_BUILD_DIR [ROUNDS] [SECONDS]}")
b=$(realpath "${2:?usage: ab_log_benchmarks.sh A_BUILD_DIR B_BUILD_DIR [ROUNDS] [SECONDS]}")
rounds=${3:-3}
seconds=${4:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for round in $(seq "$rounds"); do
  for side in A B; do
    build=$a
    [ "$side" = B ] && build=$b
    echo "== round $round, $side ($build)"
    "$build/bench/log_bench" --benchmark_format=console 2>/dev/null |
      awk '/^BM_/ {print "log_bench", $1, $2, $3}'
    rm -rf "$tmp/load"
    "$build/bench/log_load" --dir "$tmp/load" --seconds "$seconds" --durability os 2>&1 |
      awk '$1 == "pipelined" || $1 == "synchronous" {print "log_load", $1, $2, $3}'
  done
done

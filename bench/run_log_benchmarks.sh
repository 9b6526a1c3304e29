#!/usr/bin/env bash
# Builds the release tree and runs the session-log benchmarks of docs/benchmarks.md:
# the log_load append throughput (overlapped and serial syncs, in the same run) and the
# log_bench page reads and idle-session memory. Usage: bench/run_log_benchmarks.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
cmake --preset release -DAGENTSTREAM_BUILD_TESTS=OFF -DAGENTSTREAM_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build/release -j2 --target log_load log_bench >/dev/null
dir=$(mktemp -d /tmp/agentstream-bench-XXXXXX)
echo "== log_load, default (syncs overlap large commits)"
build/release/bench/log_load --dir "$dir/a" --seconds "$seconds"
echo "== log_load, every commit synced inside COMMIT (--serial-syncs)"
build/release/bench/log_load --dir "$dir/b" --seconds "$seconds" --serial-syncs
echo "== log_load, durability os (no fsync: the CPU ceiling of the same round trips)"
build/release/bench/log_load --dir "$dir/c" --seconds "$seconds" --durability os
echo "== log_bench"
build/release/bench/log_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
rm -rf "$dir"

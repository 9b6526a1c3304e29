#!/usr/bin/env bash
# Builds everything and runs every check: formatting and clang-tidy, the unit, conformance and
# crash tests (debug build), and the same tests under AddressSanitizer + UBSan (clang-14).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-2}
# ccache: hash paths relative to the checkout, so clones in other folders share the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

echo "== build (debug)"
cmake --preset debug -DAGENTSTREAM_BUILD_TESTS=ON -DAGENTSTREAM_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build/debug -j2

echo "== lint"
tools/lint.sh build/debug

echo "== tests under AddressSanitizer + UBSan"
cmake --preset asan -DAGENTSTREAM_BUILD_TESTS=ON >/dev/null
cmake --build build/asan -j2
AGENTSTREAM_CRASH_CYCLES=10 ctest --test-dir build/asan --output-on-failure

echo "== fuzzing (${FUZZ_SECONDS:=20} s per target)"
for target in fuzz_record_batch fuzz_event_codec; do
  log=$(mktemp)
  if ! build/asan/fuzz/$target -max_total_time="$FUZZ_SECONDS" -max_len=4096 \
       -print_final_stats=1 >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzzing $target found a failure"
    exit 1
  fi
  echo "$target: $(grep -m1 'stat::number_of_executed_units' "$log")"
  rm -f "$log"
done

echo "== tests (debug)"
ctest --test-dir build/debug --output-on-failure

#!/usr/bin/env bash
# Builds everything and runs every check: formatting and clang-tidy, every test under
# AddressSanitizer + UBSan (clang-14, build/ci-asan), the fuzz targets, and the tests that drive
# the programs from outside again on the debug build (g++, build/ci-debug). The PostgreSQL store's
# tests run against a throw-away cluster this script starts.
set -euo pipefail
cd "$(dirname "$0")/.."
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-2}
# ccache: hash paths relative to the checkout, so clones in other folders share the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

# stage NAME: ends the stage that ran before (recording its time) and prints NAME's header.
# The times are printed when the script exits, whether it passed or failed.
stage_names=() stage_times=() stage_start=$SECONDS
stage() {
  if [ ${#stage_names[@]} -gt 0 ]; then stage_times+=($((SECONDS - stage_start))); fi
  stage_names+=("$1") stage_start=$SECONDS
  echo "== $1"
}
print_stage_times() {
  stage_times+=($((SECONDS - stage_start)))
  echo "== stage times"
  for i in "${!stage_names[@]}"; do
    printf '%4d min %2d s  %s\n' $((stage_times[i] / 60)) $((stage_times[i] % 60)) "${stage_names[i]}"
  done
  echo "total time of tools/test.sh: $((SECONDS / 60)) min $((SECONDS % 60)) s"
}
trap print_stage_times EXIT

stage "setup (packages, npm)"
tools/setup.sh

# A throw-away PostgreSQL cluster for the PostgreSQL store's tests (stopped and removed on exit).
# It listens on a Unix socket in its own directory and on no TCP port, so it cannot collide with
# another run's cluster or any other server (tools/pg_test_cluster.sh says why). Each test then
# works in a schema or a database of its own (tests/lib/e2e.sh: pg_database).
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-pg-XXXXXX")
stop_pg() { tools/pg_test_cluster.sh stop "$pg_dir" 2>/dev/null || true; rm -rf "$pg_dir"; }
trap 'stop_pg; print_stage_times' EXIT
stage "PostgreSQL test cluster"
AGENTSTREAM_TEST_PG=$(tools/pg_test_cluster.sh start "$pg_dir")
export AGENTSTREAM_TEST_PG
echo "PostgreSQL for tests: $AGENTSTREAM_TEST_PG"

# The GoogleTest binaries are built and run once, under the sanitizers; the tests that drive the
# built programs from outside (the daemon, the CLI, the page) run in both builds.
# Both builds compile in unity batches (CMAKE_UNITY_BUILD: a few sources per compiler run, so the
# headers are read once per batch); CONTRIBUTING.md has the figures.
stage "build (debug, the programs and benchmarks)"
cmake --preset ci-debug >/dev/null
cmake --build build/ci-debug -j2

stage "lint"
tools/lint.sh build/ci-debug

stage "build under AddressSanitizer + UBSan (clang-14), with the GoogleTest binaries"
cmake --preset ci-asan >/dev/null
cmake --build build/ci-asan -j2
stage "tests under AddressSanitizer + UBSan"
AGENTSTREAM_CRASH_CYCLES=10 ctest --test-dir build/ci-asan --output-on-failure

stage "fuzzing (${FUZZ_SECONDS:=15} s per target, two at a time)"
FUZZ_BUILD=build/ci-asan tools/fuzz.sh "$FUZZ_SECONDS"

# The debug build runs the tests from outside that the sanitizer build did not run: those that
# need a build without sanitizers (the page, the package, chaos and failover, the conformance
# suites, the load tools). The end-to-end tests both builds define ran above, under the
# sanitizers, against the same sources.
stage "tests (debug: the programs from outside that the sanitizer build did not run)"
test_names() { ctest --test-dir "$1" -N | sed -n 's/^ *Test *#[0-9]*: //p'; }
ran_under_asan=$(test_names build/ci-debug | { grep -Fxf <(test_names build/ci-asan) || true; } |
  paste -sd'|')
ctest --test-dir build/ci-debug --output-on-failure ${ran_under_asan:+-E "^(${ran_under_asan})\$"}

stage "test times"
tools/test_times.sh -n 15 build/ci-asan build/ci-debug

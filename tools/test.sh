#!/usr/bin/env bash
# Builds everything and runs every check: formatting and clang-tidy, the unit, conformance and
# crash tests (debug build), and the same tests under AddressSanitizer + UBSan (clang-14). The
# PostgreSQL store's tests run against a throw-away cluster this script starts.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-2}
# ccache: hash paths relative to the checkout, so clones in other folders share the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

# A throw-away PostgreSQL cluster for the PostgreSQL store's tests (stopped and removed on exit).
# It listens on a Unix socket in its own directory and on no TCP port, so it cannot collide with
# another run's cluster or any other server (tools/pg_test_cluster.sh says why). Each test then
# works in a schema or a database of its own (tests/lib/e2e.sh: pg_database).
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-pg-XXXXXX")
stop_pg() { tools/pg_test_cluster.sh stop "$pg_dir" 2>/dev/null || true; rm -rf "$pg_dir"; }
trap stop_pg EXIT
echo "== PostgreSQL test cluster"
AGENTSTREAM_TEST_PG=$(tools/pg_test_cluster.sh start "$pg_dir")
export AGENTSTREAM_TEST_PG
echo "PostgreSQL for tests: $AGENTSTREAM_TEST_PG"

echo "== build (debug)"
cmake --preset debug -DAGENTSTREAM_BUILD_TESTS=ON -DAGENTSTREAM_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build/debug -j2

echo "== lint"
tools/lint.sh build/debug

echo "== tests under AddressSanitizer + UBSan"
cmake --preset asan -DAGENTSTREAM_BUILD_TESTS=ON >/dev/null
cmake --build build/asan -j2
AGENTSTREAM_CRASH_CYCLES=10 ctest --test-dir build/asan --output-on-failure

echo "== fuzzing (${FUZZ_SECONDS:=15} s per target)"
tools/fuzz.sh "$FUZZ_SECONDS"

echo "== tests (debug)"
ctest --test-dir build/debug --output-on-failure

echo "== test times"
tools/test_times.sh -n 15 build/asan build/debug
echo "total time of tools/test.sh: $((SECONDS / 60)) min $((SECONDS % 60)) s"

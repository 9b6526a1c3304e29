#!/usr/bin/env bash
# `store copy` of a large store: gen_long_session writes one session of N events (default
# 100,000) straight through the log API into SQLite, 10 events per append (a daemon's commits hold
# a few events each, so the copy moves as many rows as it would from a daemon's store); it is copied to PostgreSQL and back to a new
# SQLite file, each copy timed, and the three digests must be equal. Prints the rate of each
# direction (docs/benchmarks.md, "Copying a store"; the 1,000,000-event run is this script with
# N = 1000000 on a release build).
#   copy_bulk_test.sh AGENTSTREAM_BINARY GEN_LONG_SESSION_BINARY [N]
#   (AGENTSTREAM_TEST_PG names the server; skipped without)
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
GEN=$2
events=${3:-100000}
pg=$(pg_database) || skip "AGENTSTREAM_TEST_PG is not set"

start=$(date +%s.%N)
"$GEN" --data "$E2E_DIR/src" --events "$events" --batch 10 >/dev/null || fail "gen_long_session"
generated=$(date +%s.%N)
"$E2E_BIN" store copy --from "$E2E_DIR/src/agentstream.db" --to "$pg" >"$E2E_DIR/to_pg" ||
  fail "copy to PostgreSQL: $(cat "$E2E_DIR/to_pg")"
to_pg=$(date +%s.%N)
"$E2E_BIN" store copy --from "$pg" --to "$E2E_DIR/back.db" >"$E2E_DIR/to_sqlite" ||
  fail "copy to SQLite: $(cat "$E2E_DIR/to_sqlite")"
back=$(date +%s.%N)
digest() { grep -E ' events  sha256 ' "$1"; }
[ "$(digest "$E2E_DIR/to_pg")" = "$(digest "$E2E_DIR/to_sqlite")" ] ||
  fail "digests differ: $(digest "$E2E_DIR/to_pg") / $(digest "$E2E_DIR/to_sqlite")"
grep -q " $events events  sha256 " "$E2E_DIR/to_pg" || fail "not $events events: $(cat "$E2E_DIR/to_pg")"
awk -v n="$events" -v a="$start" -v b="$generated" -v c="$to_pg" -v d="$back" 'BEGIN {
  printf "copy bulk: %d events generated in %.1f s; SQLite -> PostgreSQL %.1f s (%.0f events/s); PostgreSQL -> SQLite %.1f s (%.0f events/s); digests equal\n",
    n, b - a, c - b, n / (c - b), d - c, n / (d - c) }'

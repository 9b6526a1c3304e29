#!/usr/bin/env bash
# The official Durable Streams server conformance suite (npm @durable-streams/server-conformance-
# tests, pinned in tests/conformance) against the daemon on loopback, with subscriptions enabled
# and a 1 s long-poll timeout. Builds nothing: takes the agentstream binary. Fails when fewer
# than MIN_PASSED tests pass (default: all 338), or when the official client
# (live_session.test.mjs) does not see every event of a live agent session exactly once.
# STORE: the daemon's --store (default: SQLite in a fresh data directory); "postgres" makes a
# database of the run's own on the server of AGENTSTREAM_TEST_PG (dropped at exit; exit 77, a
# skip, without it), so the generic streams and the session log live in PostgreSQL.
# Usage: tools/test_conformance.sh AGENTSTREAM_BINARY [MIN_PASSED] [STORE]
set -euo pipefail
bin=$(realpath "${1:?usage: test_conformance.sh AGENTSTREAM_BINARY [MIN_PASSED] [STORE]}")
min=${2:-338}
store=${3:-}
dir="$(cd "$(dirname "$0")/.." && pwd)/tests/conformance"
if [ ! -d "$dir/node_modules/@durable-streams/server-conformance-tests" ]; then
  echo "conformance: $dir/node_modules is missing; run tools/setup.sh (npm ci there)" >&2
  exit 1
fi
# A temporary directory, the daemon on a port it picks, and every process stopped at exit.
source "$(cd "$(dirname "$0")/.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$bin
tmp=$E2E_DIR
store_args=()
if [ "$store" = postgres ]; then
  [ -n "${AGENTSTREAM_TEST_PG:-}" ] || skip "conformance: AGENTSTREAM_TEST_PG is not set"
  pg_url=$(pg_database) || fail "conformance: no database of its own on $AGENTSTREAM_TEST_PG"
  store_args=(--store "$pg_url")
elif [ -n "$store" ]; then
  store_args=(--store "$store")
fi
start_daemon conformance "${store_args[@]}" --long-poll-ms 1000
url=$conformance_url
echo "conformance: daemon at $url${store:+ (store: $store)}"
status=0
(cd "$dir" && CONFORMANCE_TEST_URL="$url" CONFORMANCE_LONG_POLL_MS=1000 \
  npx --no-install vitest run --reporter=json --outputFile="$tmp/results.json" \
  >"$tmp/vitest.out" 2>&1) || status=$?
if [ ! -f "$tmp/results.json" ]; then
  tail -50 "$tmp/vitest.out" >&2
  exit 1
fi
node -e '
const r = require(process.argv[1]);
for (const f of r.testResults)
  for (const a of f.assertionResults)
    if (a.status !== "passed")
      console.log(`  ${a.status}: ${a.fullName}\n    ${(a.failureMessages[0] || "").split("\n")[0]}`);
console.log(`conformance: ${r.numPassedTests} of ${r.numTotalTests} passed`);
process.exit(r.numPassedTests >= Number(process.argv[2]) ? 0 : 1);
' "$tmp/results.json" "$min" || { echo "conformance: fewer than $min passed (vitest exit $status)" >&2; exit 1; }

# The official client follows a live agent session from an offset (every event exactly once).
if ! (cd "$dir" && AGENTSTREAM_URL="$url" VITEST_INCLUDE=live_session.test.mjs \
  npx --no-install vitest run >"$tmp/live.out" 2>&1); then
  tail -40 "$tmp/live.out" >&2
  echo "conformance: the client did not follow the live session" >&2
  exit 1
fi
echo "conformance: the client followed a live agent session (SSE and long-poll)"

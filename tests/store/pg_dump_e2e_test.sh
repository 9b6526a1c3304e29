#!/usr/bin/env bash
# A PostgreSQL store is backed up with PostgreSQL's own tools (docs/operations.md, "Backups"):
# `pg_dump -Fc` of a running daemon's database, `pg_restore` into a new database, and a daemon
# on that database serves it: every agent listed, every event readable, `agentstream check`
# clean. `store backup` of a PostgreSQL store is refused (exit 2) and names pg_dump.
#   pg_dump_e2e_test.sh AGENTSTREAM_BINARY      (AGENTSTREAM_TEST_PG names the server)
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
command -v pg_dump >/dev/null || skip "pg_dump is not installed"
store=$(pg_database) || skip "AGENTSTREAM_TEST_PG is not set"
serve=(--scripted-chunk-ms 0)

start_daemon a --store "$store" "${serve[@]}"
agents=()
for i in 1 2 3; do
  agent=$("$E2E_BIN" --url "$a_url" agents new --provider scripted --cwd "$E2E_DIR" --title "pg $i") ||
    fail "agents new"
  agents+=("$agent")
  for n in 1 2; do
    "$E2E_BIN" --url "$a_url" send "$agent" "prompt $n" --wait >/dev/null || fail "send $n to $agent"
  done
done

set +e
"$E2E_BIN" --store "$store" store backup --to "$E2E_DIR/x.db" 2>"$E2E_DIR/refused"
code=$?
set -e
[ "$code" -eq 2 ] || fail "store backup of PostgreSQL: exit $code, expected 2"
grep -q pg_dump "$E2E_DIR/refused" || fail "the refusal names pg_dump: $(cat "$E2E_DIR/refused")"

# While daemon a runs: pg_dump reads one snapshot of the database.
pg_dump -Fc -f "$E2E_DIR/store.dump" "$store" || fail "pg_dump"
copy=$(pg_database) || fail "a second database"
pg_restore --no-owner -d "$copy" "$E2E_DIR/store.dump" || fail "pg_restore"

start_daemon b --store "$copy" "${serve[@]}"
listed=$("$E2E_BIN" --url "$b_url" agents ls --json)
for agent in "${agents[@]}"; do
  grep -q "\"$agent\"" <<<"$listed" || fail "$agent is not listed by the daemon on the copy"
  original=$("$E2E_BIN" --store "$store" events "$agent" --json --limit 10000)
  restored=$("$E2E_BIN" --store "$copy" events "$agent" --json --limit 10000)
  [ -n "$original" ] || fail "$agent has no events"
  [ "$original" = "$restored" ] || fail "$agent: the copy's events differ from the original's"
  served=$(curl -fsS "$b_url/v1/agents/$agent/events?offset=-1") || fail "read $agent through b"
  grep -q '"user.message"' <<<"$served" || fail "$agent: no user message served: $served"
done
"$E2E_BIN" --store "$copy" check >"$E2E_DIR/check" 2>&1 || fail "check of the copy: $(cat "$E2E_DIR/check")"
echo "pg_dump e2e: ${#agents[@]} agents dumped while the daemon ran, restored, served and checked"

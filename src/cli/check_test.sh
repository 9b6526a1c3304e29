#!/usr/bin/env bash
# `agentstream check` over real SQLite logs: a clean log passes; a turn left open by a crash is
# reported as a violation of invariant b of docs/timeline.md (every turn start has a terminal;
# exit 1) unless --allow-open says the tail may run.
set -u
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
bin=$1
dir=$E2E_DIR
store="sqlite:$dir/log.db"

"$bin" --store "$store" demo --turns 2 --delay-ms 0 >/dev/null || fail "demo"
"$bin" --store "$store" check >"$dir/out" 2>&1 || fail "a clean log must pass: $(cat "$dir/out")"
grep -q "checked 1 sessions, 35 events: 0 violations" "$dir/out" || fail "summary: $(cat "$dir/out")"

"$bin" --store "$store" demo --turns 2 --delay-ms 0 --stop-mid-turn >/dev/null || fail "demo"
"$bin" --store "$store" check --json >"$dir/out" 2>"$dir/err"
[ $? -eq 1 ] || fail "an open turn must fail the check"
grep -q '"invariant":"b"' "$dir/out" || fail "expected a violation of b: $(cat "$dir/out")"
[ "$(wc -l <"$dir/out")" -eq 1 ] || fail "exactly one violation expected: $(cat "$dir/out")"
grep -q "checked 2 sessions" "$dir/err" || fail "summary: $(cat "$dir/err")"
"$bin" --store "$store" check --allow-open >/dev/null 2>&1 || fail "--allow-open accepts a running tail"
echo "cli check: 1 passed, 0 failed"

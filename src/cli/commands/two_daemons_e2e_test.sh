#!/usr/bin/env bash
# Two daemons on one PostgreSQL database (a database of this test's own on the server of
# AGENTSTREAM_TEST_PG; skipped without it): an agent created and driven through daemon A is
# listed, read, renamed, searched and followed live through daemon B, and B's follow output is
# exactly the stored log.
#   two_daemons_e2e_test.sh AGENTSTREAM_BINARY
set -u
source "$(cd "$(dirname "$0")/../../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
dir=$E2E_DIR
[ -n "${AGENTSTREAM_TEST_PG:-}" ] || skip "AGENTSTREAM_TEST_PG is not set"
store=$(pg_database) || fail "no database of its own"
show_on_failure "$dir/follow.err"
unset AGENTSTREAM_TOKEN AGENTSTREAM_URL
start_daemon a --store "$store"
start_daemon b --store "$store"
# The clients' answers are checked against docs/openapi.yaml on their way (tests/lib/e2e.sh).
contract_proxy pa a
contract_proxy pb b
a=(--url "$pa_url")
b=(--url "$pb_url")

agent=$("$bin" "${a[@]}" agents new --provider scripted --cwd "$dir" --title two) || fail "agents new on a"
"$bin" "${a[@]}" send "$agent" "first" --wait >/dev/null || fail "send on a"
"$bin" "${b[@]}" agents ls --json | grep -q "\"id\":\"$agent\"" || fail "daemon b does not list $agent"
"$bin" "${b[@]}" history "$agent" --json | grep -q '"text":"first"' || fail "daemon b's history lacks the prompt"
# A title set through b is recorded by a, which runs the agent, and shown by both; a search
# through b finds a's text in the shared index.
"$bin" "${b[@]}" agents rename "$agent" "renamed through b" >/dev/null || fail "rename through b"
"$bin" "${a[@]}" agents show "$agent" --json | grep -q '"title":"renamed through b"' ||
  fail "daemon a's snapshot lacks the title set through b"
"$bin" "${b[@]}" agents show "$agent" --json | grep -q '"title":"renamed through b"' ||
  fail "daemon b's snapshot lacks the title"
"$bin" "${b[@]}" search first --agent "$agent" | grep -q "^$agent .*user.message *\[first\]" ||
  fail "search through b: $("$bin" "${b[@]}" search first --agent "$agent" 2>&1)"

# Follow through b while a runs more turns: b hears a's commits live.
"$bin" "${b[@]}" follow "$agent" --json >"$dir/follow.out" 2>"$dir/follow.err" &
follow_pid=$!
track_pid "$follow_pid"
for i in 1 2 3; do
  "$bin" "${a[@]}" send "$agent" "prompt $i" --wait >/dev/null || fail "send $i on a"
done
tail_seq=$("$bin" "${a[@]}" agents show "$agent" --json | grep -o '"cursor":"[0-9]*:[0-9]*"' | cut -d'"' -f4 | cut -d: -f2)
[ -n "$tail_seq" ] || fail "no cursor"
caught_up() { grep -q "\"seq\":$tail_seq," "$dir/follow.out"; }
until_true 20 caught_up || fail "follow through b did not reach seq $tail_seq ($(wc -l <"$dir/follow.out") lines)"
kill "$follow_pid"; wait "$follow_pid" 2>/dev/null
"$bin" --store "$store" events "$agent" --json --limit 10000 >"$dir/events.out" || fail "events"
diff "$dir/events.out" "$dir/follow.out" >/dev/null || fail "b's follow output differs from the stored log"
"$bin" --store "$store" check "$agent" >/dev/null || fail "turn invariants"
echo "two daemons e2e: $tail_seq events written through a, followed live through b"

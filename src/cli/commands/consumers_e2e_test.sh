#!/usr/bin/env bash
# Durable consumers end to end, across two real daemons on loopback (docs/consumers.md):
# daemon B's agent C forwards its events to daemon A's agent P through a webhook consumer pointed
# at P's inbox (signed with P's inbox token). B is killed with SIGKILL while it delivers and is
# restarted; afterwards P's log holds every event of C exactly once, in order (the inbox
# deduplicates redeliveries by producer stamp). Then a local child on A forwards through the
# parent-session sink, and the consumer commands' errors and listing are checked. Last, daemon A
# delivers to a real webhook receiver process and is killed with SIGKILL three times while it
# delivers: the receiver's side effects (one per idempotency key) cover the session's events
# exactly once, as contiguous ranges with no overlap.
#   consumers_e2e_test.sh AGENTSTREAM_BINARY WEBHOOK_RECEIVER_BINARY
set -u
source "$(cd "$(dirname "$0")/../../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
receiver=$2
dir=$E2E_DIR
unset AGENTSTREAM_TOKEN AGENTSTREAM_URL
start() {  # start NAME: (re)starts daemon NAME; its client options go to the array NAME
  start_daemon "$1"
  # The client's answers are checked against docs/openapi.yaml on their way (tests/lib/e2e.sh).
  [ -n "$(daemon_url "p$1")" ] || contract_proxy "p$1" "$1"
  local -n options=$1
  options=(--url "$(daemon_url "p$1")")
}
stop() {  # stop NAME: a clean stop (SIGTERM), so its log can be read directly
  kill_daemon "$1"
}
child_seqs() {  # child_seqs DATA PARENT CHILD: the childSeq of every forwarded event of CHILD
  "$bin" --data "$1" events "$2" --limit 10000 --json |
    grep '"kind":"subagent.event"' | grep "\"child\":\"$3\"" |
    grep -o '"childSeq":[0-9]*' | cut -d: -f2
}
event_count() {  # event_count DATA SESSION
  "$bin" --data "$1" events "$2" --limit 10000 --json | wc -l
}

start a
start b
parent=$("$bin" "${a[@]}" agents new --provider scripted --cwd "$dir" --title parent) || fail "agents new (A)"
token=$("$bin" "${a[@]}" inbox "$parent" --json | grep -o '"token":"[0-9a-f]*"' | cut -d'"' -f4)
[ ${#token} -eq 64 ] || fail "inbox token: '$token'"
token_again=$("$bin" "${a[@]}" inbox "$parent" --json | grep -o '"token":"[0-9a-f]*"' | cut -d'"' -f4)
[ "$token" = "$token_again" ] || fail "the inbox token changed between two reads"

child=$("$bin" "${b[@]}" agents new --provider scripted --cwd "$dir" --title child) || fail "agents new (B)"
"$bin" "${b[@]}" consumers new forward --session "$child" --no-coalesce --backoff-ms 50 \
  --max-backoff-ms 500 --webhook "$a_url/v1/agents/$parent/inbox" \
  --secret "$token" >/dev/null || fail "consumers new forward"

"$bin" "${b[@]}" send "$child" "first prompt" --wait >/dev/null || fail "send (1)"
# The second turn streams while B is killed; the consumer is delivering during it.
"$bin" "${b[@]}" send "$child" "second prompt" >/dev/null || fail "send (2)"
sleep 0.3
kill_daemon b KILL
start b
"$bin" "${b[@]}" send "$child" "after the crash" --wait >/dev/null || fail "send (3)"

caught_up() {
  "$bin" "${b[@]}" consumers ls --json | grep -q '"lagEvents":0,' &&
    ! "$bin" "${b[@]}" consumers ls --json | grep -q '"parked":[1-9]'
}
until_true 60 caught_up || fail "the forward consumer did not catch up: $("$bin" "${b[@]}" consumers show forward)"
"$bin" "${b[@]}" consumers show forward >"$dir/show.txt" || fail "consumers show"
grep -q "$child" "$dir/show.txt" || fail "consumers show lacks the session: $(cat "$dir/show.txt")"
curl -fsS "$(daemon_url b)/metrics" >"$dir/metrics.txt" || fail "GET /metrics"
grep -q 'agentstream_consumer_lag_events{consumer="forward"} 0' "$dir/metrics.txt" ||
  fail "metrics lack the consumer's lag: $(grep consumer "$dir/metrics.txt")"

# ---- a local child forwards through the parent-session sink ----
local_child=$("$bin" "${a[@]}" agents new --provider scripted --cwd "$dir" --title local) || fail "agents new (local)"
"$bin" "${a[@]}" consumers new local --session "$local_child" --parent "$parent" --no-coalesce \
  >/dev/null || fail "consumers new local"
"$bin" "${a[@]}" send "$local_child" "local work" --wait >/dev/null || fail "send (local)"
local_caught_up() { "$bin" "${a[@]}" consumers show local --json | grep -q '"lagEvents":0,'; }
until_true 60 local_caught_up || fail "the local consumer did not catch up"

# ---- the consumer commands' errors ----
if "$bin" "${a[@]}" consumers new local --session "$local_child" --jsonl "$dir/x.jsonl" 2>"$dir/err.txt"; then
  fail "a different spec under an existing id was accepted"
fi
grep -q "already_exists" "$dir/err.txt" || fail "conflict error: $(cat "$dir/err.txt")"
if "$bin" "${a[@]}" consumers new bad --webhook "ftp://x" --secret s 2>"$dir/err.txt"; then
  fail "an ftp webhook was accepted"
fi
grep -q "sink.url" "$dir/err.txt" || fail "bad spec error: $(cat "$dir/err.txt")"
"$bin" "${a[@]}" consumers show nope 2>/dev/null && fail "show of a missing consumer succeeded"

# ---- the parent's log: every child event once, in order ----
stop a
stop b
n_child=$(event_count "$(daemon_data b)" "$child")
[ "$n_child" -gt 20 ] || fail "the child has only $n_child events"
expected=$(seq 1 "$n_child")
got=$(child_seqs "$(daemon_data a)" "$parent" "$child")
[ "$got" = "$expected" ] || fail "forwarded child seqs differ from 1..$n_child: $(echo $got | head -c 400)"
n_local=$(event_count "$(daemon_data a)" "$local_child")
got_local=$(child_seqs "$(daemon_data a)" "$parent" "$local_child")
[ "$got_local" = "$(seq 1 "$n_local")" ] || fail "local child seqs differ from 1..$n_local: $got_local"
"$bin" --data "$(daemon_data a)" check >/dev/null || fail "check found violations on daemon A"

# ---- kill -9 of the daemon while it delivers to a real webhook receiver ----
"$receiver" --secret hooksecret --effects "$dir/effects.txt" --requests "$dir/requests.txt" \
  --delay-ms 250 >"$dir/receiver.out" 2>&1 &
track_pid $!
show_on_failure "$dir/receiver.out"
receiver_port=$(wait_for_output "$dir/receiver.out" '^PORT ([0-9]+)$') ||
  fail "the webhook receiver did not start"
start a
hooked=$("$bin" "${a[@]}" agents new --provider scripted --cwd "$dir" --title hooked) || fail "agents new (hooked)"
"$bin" "${a[@]}" consumers new hook --session "$hooked" --no-coalesce --backoff-ms 50 \
  --max-backoff-ms 500 --webhook "http://127.0.0.1:$receiver_port/hook" --secret hooksecret \
  >/dev/null || fail "consumers new hook"
for round in 1 2 3; do
  "$bin" "${a[@]}" send "$hooked" "round $round" >/dev/null || fail "send (round $round)"
  sleep 0.$((2 + round))
  kill_daemon a KILL
  start a
done
"$bin" "${a[@]}" send "$hooked" "last round" --wait >/dev/null || fail "send (last round)"
hook_caught_up() { "$bin" "${a[@]}" consumers show hook --json | grep -q '"lagEvents":0,'; }
until_true 60 hook_caught_up || fail "the hook consumer did not catch up: $("$bin" "${a[@]}" consumers show hook)"
# Each restart took the daemon's own lease back at once, under the generation it held, instead of
# waiting out the lease (15 s) for a grant of the next generation.
shown=$("$bin" "${a[@]}" consumers show hook --json)
grep -q '"generation":1,' <<<"$shown" ||
  fail "the restarted daemon did not take its own lease back: $shown"
stop a
n_hooked=$(event_count "$(daemon_data a)" "$hooked")
# Effects lines: KEY SESSION EPOCH SEQSTART SEQEND EVENTS COALESCED. Sorted by SEQSTART they
# must tile 1..n_hooked.
next=1
while read -r _ _ _ first last _ _; do
  [ "$first" -eq "$next" ] || fail "effects: range $first-$last where $next was expected"
  next=$((last + 1))
done < <(sort -k4,4n "$dir/effects.txt")
[ $((next - 1)) -eq "$n_hooked" ] || fail "effects end at $((next - 1)), the session has $n_hooked events"
keys=$(cut -d' ' -f1 "$dir/effects.txt" | sort | uniq -d)
[ -z "$keys" ] || fail "an idempotency key's effect happened twice: $keys"
echo "webhook: $(wc -l <"$dir/effects.txt") effects, $(wc -l <"$dir/requests.txt") requests for $n_hooked events"
echo "PASS: $n_child remote and $n_local local child events forwarded exactly once"

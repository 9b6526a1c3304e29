#!/usr/bin/env bash
# The client commands against a real daemon: `agentstream serve` on a port of its own with a
# fresh data directory (tests/lib/e2e.sh). A scripted agent gets prompts (send --wait, a
# permission answered with approve), history and agents ls are checked, and `follow --json` runs
# in the background while the daemon is killed with SIGKILL mid-stream and restarted: follow's
# output must then be exactly the stored log (`events --json`), every seq once, no gap, no
# duplicate. follow talks to the daemon through a proxy that keeps one address across the
# restart (the daemon gets a new port). With `postgres` as the second argument the daemon keeps
# its log in a database of this test's own on AGENTSTREAM_TEST_PG's server. Then a token is
# enforced, and the client speaks https through a TLS-terminating proxy in front of the daemon:
# refused while the certificate is untrusted, then send --wait and follow. Last, a schedule made,
# fired, shown, paused and removed with `agentstream schedules`.
#   client_e2e_test.sh AGENTSTREAM_BINARY [sqlite|postgres]
set -u
source "$(cd "$(dirname "$0")/../../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
dir=$E2E_DIR
store_args=()
case "${2:-sqlite}" in
  sqlite) ;;
  postgres)
    [ -n "${AGENTSTREAM_TEST_PG:-}" ] || skip "AGENTSTREAM_TEST_PG is not set"
    store=$(pg_database) || fail "no database of its own"
    store_args=(--store "$store")
    ;;
  *) echo "usage: $0 AGENTSTREAM_BINARY [sqlite|postgres]" >&2; exit 2 ;;
esac
show_on_failure "$dir/follow.err"
unset AGENTSTREAM_TOKEN

start() {  # start [serve options...]: (re)starts the daemon; the client talks to it
  start_daemon serve "${store_args[@]}" "$@"
  export AGENTSTREAM_URL=$api_url
}
# follow's stable address across the daemon's restart; every other client's answers are checked
# against docs/openapi.yaml on their way (tests/lib/e2e.sh, contract_proxy).
start_proxy front serve
contract_proxy api serve

# ---- a turn with --wait, history, agents ls ----
start
"$bin" agents ls >/dev/null 2>&1 || fail "agents ls on an empty daemon"
agent=$("$bin" agents new --provider scripted --cwd "$dir" --title e2e) || fail "agents new"
[ -n "$agent" ] || fail "agents new printed no id"

"$bin" send "$agent" "hello there" --wait --json >"$dir/send.json" || fail "send --wait: $(cat "$dir/send.json")"
grep -q '"turnOutcome":"completed"' "$dir/send.json" || fail "send --wait outcome: $(cat "$dir/send.json")"
grep -q '"accepted":true' "$dir/send.json" || fail "send --wait not accepted: $(cat "$dir/send.json")"

"$bin" history "$agent" --json >"$dir/history.json" || fail "history"
grep -q '"kind":"user_message"' "$dir/history.json" || fail "history has no user message"
grep -q '"text":"hello there"' "$dir/history.json" || fail "history lacks the prompt"
grep -q '"kind":"assistant_message"' "$dir/history.json" || fail "history has no assistant message"
"$bin" history "$agent" --limit 1 >"$dir/history.txt" || fail "history (text)"
grep -q -- "--before" "$dir/history.txt" || fail "a one-item page offers older items: $(cat "$dir/history.txt")"

"$bin" agents ls --json >"$dir/agents.json" || fail "agents ls --json"
grep -q "\"id\":\"$agent\"" "$dir/agents.json" || fail "agents ls lacks $agent: $(cat "$dir/agents.json")"
grep -q '"status":"idle"' "$dir/agents.json" || fail "the agent is not idle: $(cat "$dir/agents.json")"

# ---- a permission answered with approve ----
"$bin" send "$agent" "ask permission first" >/dev/null || fail "send (permission)"
request=""
find_request() {
  request=$("$bin" agents show "$agent" --json | grep -o '"requestId":"[^"]*"' | head -n 1 | cut -d'"' -f4)
  [ -n "$request" ]
}
until_true 20 find_request || fail "no permission request appeared"
"$bin" approve "$agent" "$request" >/dev/null || fail "approve"
is_idle() { "$bin" agents show "$agent" --json | grep -q '"status":"idle"'; }
until_true 20 is_idle || fail "the turn did not end after approve"
"$bin" history "$agent" --json | grep -q '"decision":"allow"' || fail "history lacks the allowed permission"

# ---- follow across a daemon crash ----
tail_seq() { "$bin" agents show "$agent" --json | grep -o '"cursor":"[0-9]*:[0-9]*"' | cut -d'"' -f4 | cut -d: -f2; }
# The log's length before the new prompts: follow prints one line per event, so more lines than
# this (plus a few) means it shows events of the new turns, however fast or slow it catches up.
before=$(tail_seq)
[ -n "$before" ] || fail "no cursor before follow"
AGENTSTREAM_URL=$front_url "$bin" follow "$agent" --json >"$dir/follow.out" 2>"$dir/follow.err" &
follow_pid=$!
track_pid "$follow_pid"
for i in 1 2 3 4 5; do
  "$bin" send "$agent" "queued prompt $i" --while-running queue >/dev/null || fail "send $i"
done
grew() { [ "$(wc -l <"$dir/follow.out")" -gt $((before + 5)) ]; }
until_true 30 grew || fail "follow shows no new events ($(wc -l <"$dir/follow.out") lines, log had $before)"
kill_daemon serve KILL
start
"$bin" send "$agent" "after the crash" --wait >/dev/null || fail "send --wait after the restart"

last=$(tail_seq)
[ -n "$last" ] || fail "no cursor"
caught_up() { grep -q "\"seq\":$last," "$dir/follow.out"; }
until_true 30 caught_up || fail "follow did not reach seq $last"
kill "$follow_pid"; wait "$follow_pid" 2>/dev/null
grep -q "reconnecting" "$dir/follow.err" || fail "follow did not see the daemon go away"

kill_daemon serve
"$bin" --data "$(daemon_data serve)" "${store_args[@]}" events "$agent" --json --limit 10000 >"$dir/events.out" || fail "events"
[ "$(wc -l <"$dir/events.out")" -eq "$last" ] || fail "events: $(wc -l <"$dir/events.out") lines, tail $last"
seqs=$(grep -o '"seq":[0-9]*' "$dir/follow.out" | cut -d: -f2 | tr '\n' ' ')
[ "$seqs" = "$(seq 1 "$last" | tr '\n' ' ')" ] || fail "follow seqs are not 1..$last once each: $seqs"
diff "$dir/events.out" "$dir/follow.out" >/dev/null || fail "follow output differs from the log"
"$bin" --data "$(daemon_data serve)" "${store_args[@]}" check "$agent" >/dev/null 2>&1 || fail "turn invariants after the crash"

# ---- a token is enforced ----
start --token s3cret
"$bin" agents ls >/dev/null 2>&1
[ $? -eq 1 ] || fail "a request without the token must fail with exit 1"
AGENTSTREAM_TOKEN=s3cret "$bin" agents ls >/dev/null || fail "AGENTSTREAM_TOKEN is not sent"
"$bin" history "$agent" --before nonsense >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad cursor is a usage error (exit 2)"

# ---- https through a TLS-terminating proxy ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null ||
  fail "openssl could not make a certificate"
start_proxy tls serve --tls "$dir/cert.pem" "$dir/key.pem"
https_url=$tls_url
AGENTSTREAM_URL=$https_url "$bin" agents ls >/dev/null 2>"$dir/untrusted.err"
[ $? -eq 1 ] || fail "an untrusted certificate must fail with exit 1"
grep -q "TLS handshake" "$dir/untrusted.err" || fail "untrusted: $(cat "$dir/untrusted.err")"
export SSL_CERT_FILE=$dir/cert.pem
AGENTSTREAM_URL=$https_url AGENTSTREAM_TOKEN=s3cret "$bin" send "$agent" "over tls" --wait --json \
  >"$dir/tls_send.json" || fail "send --wait over https: $(cat "$dir/tls_send.json")"
grep -q '"turnOutcome":"completed"' "$dir/tls_send.json" || fail "over https: $(cat "$dir/tls_send.json")"
tls_last=$(AGENTSTREAM_TOKEN=s3cret tail_seq)
AGENTSTREAM_URL=$https_url AGENTSTREAM_TOKEN=s3cret "$bin" follow "$agent" --json \
  >"$dir/tls_follow.out" 2>"$dir/tls_follow.err" &
follow_pid=$!
track_pid "$follow_pid"
tls_caught_up() { grep -qs "\"seq\":$tls_last," "$dir/tls_follow.out"; }
until_true 30 tls_caught_up || fail "follow over https did not reach seq $tls_last: $(cat "$dir/tls_follow.err")"
kill "$follow_pid"; wait "$follow_pid" 2>/dev/null
[ "$(wc -l <"$dir/tls_follow.out")" -eq "$tls_last" ] || fail "follow over https: not $tls_last lines"
unset SSL_CERT_FILE

# ---- serve --max-live-agents: a start beyond the bound stops the runtime idle the longest ----
kill_daemon serve
start --max-live-agents 1
"$bin" send "$agent" "the first" --wait --json >"$dir/live1.json" || fail "send (bound 1): $(cat "$dir/live1.json")"
offset=$(stat -c %s "$E2E_DIR/serve.log")
second=$("$bin" agents new --provider scripted --cwd "$dir" --title second) || fail "agents new (bound 1)"
"$bin" send "$second" "the second" --wait --json >"$dir/live2.json" || fail "send (second): $(cat "$dir/live2.json")"
stopped() { tail -c +$((offset + 1)) "$E2E_DIR/serve.log" | grep -q "agent.runtime_stopped agent=$agent"; }
until_true 10 stopped || fail "the second agent's start did not stop the first's runtime"
"$bin" send "$agent" "the first again" --wait --json >"$dir/live3.json" || fail "send (reload): $(cat "$dir/live3.json")"
grep -q '"turnOutcome":"completed"' "$dir/live3.json" || fail "the first agent reloaded: $(cat "$dir/live3.json")"

# ---- schedules: new, ls, show, pause, rm; a refused definition ----
kill_daemon serve
start --schedule-floor 1s
"$bin" schedules new tick --every 1s --agent "$agent" --prompt 'tick {{tick}}' >"$dir/sched.txt" ||
  fail "schedules new: $(cat "$dir/sched.txt")"
grep -q "^tick next " "$dir/sched.txt" || fail "schedules new prints the next tick: $(cat "$dir/sched.txt")"
fired() { "$bin" schedules show tick --json | grep -q '"turnOutcome":"completed"'; }
until_true 20 fired || fail "the schedule never fired a completed turn: $("$bin" schedules show tick --json)"
"$bin" schedules show tick | grep -q "fired    $agent" || fail "schedules show: $("$bin" schedules show tick)"
"$bin" schedules ls | grep -q "^tick .*every 1s .*$agent .*active" || fail "schedules ls: $("$bin" schedules ls)"
"$bin" schedules pause tick | grep -q "paused" || fail "schedules pause"
if "$bin" schedules new never --cron '0 0 30 2 *' --agent "$agent" --prompt x 2>"$dir/never.err"; then
  fail "a cron expression that never fires was taken"
fi
grep -q "never fires" "$dir/never.err" || fail "the refusal says why: $(cat "$dir/never.err")"
"$bin" schedules rm tick || fail "schedules rm"
"$bin" schedules ls --json | grep -q '"schedules":\[\]' || fail "schedules rm left: $("$bin" schedules ls --json)"
"$bin" history "$agent" --json --limit 500 | grep -q 'schedule tick: tick 20' ||
  fail "the agent's history does not show the firing: $("$bin" history "$agent" --limit 5)"

kill_daemon serve
echo "cli client e2e: $last events followed across a daemon crash; all checks passed"

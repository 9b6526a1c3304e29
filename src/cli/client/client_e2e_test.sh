#!/usr/bin/env bash
# The client commands against a real daemon: `agentstream serve` on a free loopback port with a
# fresh data directory. A scripted agent gets prompts (send --wait, a permission answered with
# approve), history and agents ls are checked, and `follow --json` runs in the background while
# the daemon is killed with SIGKILL mid-stream and restarted: follow's output must then be exactly
# the stored log (`events --json`), every seq once, no gap, no duplicate. With a second argument, a
# store URL, the daemon keeps its log there (the PostgreSQL run). Then a token is enforced,
# and the client speaks https through a TLS-terminating proxy (tls_proxy.mjs, node) in front of the
# daemon: refused while the certificate is untrusted, then send --wait and follow.
set -u
bin=$1
# An optional store URL (postgresql://...): the same checks with the daemon's log on that store.
store_args=()
[ -n "${2:-}" ] && store_args=(--store "$2")
dir=$(mktemp -d)
serve_pid=""
follow_pid=""
proxy_pid=""
cleanup() {
  [ -n "$proxy_pid" ] && kill -9 "$proxy_pid" 2>/dev/null
  [ -n "$follow_pid" ] && kill -9 "$follow_pid" 2>/dev/null
  [ -n "$serve_pid" ] && kill -9 "$serve_pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- serve log"; tail -n 30 "$dir"/serve*.log 2>/dev/null
  echo "--- follow stderr"; tail -n 20 "$dir/follow.err" 2>/dev/null
  exit 1
}

# A port nothing listens on (bash's /dev/tcp connect fails).
port=""
for candidate in $(shuf -i 20000-60000 -n 50); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
done
[ -n "$port" ] || fail "no free port"
url="http://127.0.0.1:$port"
export AGENTSTREAM_URL=$url
unset AGENTSTREAM_TOKEN

# until_true SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds or time is up.
until_true() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.1
  done
}

start_daemon() {  # start_daemon [serve options...]
  "$bin" --data "$dir/data" "${store_args[@]}" serve --listen "127.0.0.1:$port" "$@" >>"$dir/serve.log" 2>&1 &
  serve_pid=$!
  daemon_up() {
    kill -0 "$serve_pid" 2>/dev/null || fail "the daemon exited"
    "$bin" agents ls "${token_args[@]}" >/dev/null 2>&1
  }
  until_true 30 daemon_up || fail "the daemon did not start"
}
token_args=()

# ---- a turn with --wait, history, agents ls ----
start_daemon
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
"$bin" follow "$agent" --json >"$dir/follow.out" 2>"$dir/follow.err" &
follow_pid=$!
for i in 1 2 3 4 5; do
  "$bin" send "$agent" "queued prompt $i" --while-running queue >/dev/null || fail "send $i"
done
grew() { [ "$(wc -l <"$dir/follow.out")" -gt $((before + 5)) ]; }
until_true 30 grew || fail "follow shows no new events ($(wc -l <"$dir/follow.out") lines, log had $before)"
{ kill -9 "$serve_pid"; wait "$serve_pid"; } 2>/dev/null
start_daemon
"$bin" send "$agent" "after the crash" --wait >/dev/null || fail "send --wait after the restart"

last=$(tail_seq)
[ -n "$last" ] || fail "no cursor"
caught_up() { grep -q "\"seq\":$last," "$dir/follow.out"; }
until_true 30 caught_up || fail "follow did not reach seq $last"
kill "$follow_pid"; wait "$follow_pid" 2>/dev/null; follow_pid=""
grep -q "reconnecting" "$dir/follow.err" || fail "follow did not see the daemon go away"

kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null; serve_pid=""
"$bin" --data "$dir/data" "${store_args[@]}" events "$agent" --json --limit 10000 >"$dir/events.out" || fail "events"
[ "$(wc -l <"$dir/events.out")" -eq "$last" ] || fail "events: $(wc -l <"$dir/events.out") lines, tail $last"
seqs=$(grep -o '"seq":[0-9]*' "$dir/follow.out" | cut -d: -f2 | tr '\n' ' ')
[ "$seqs" = "$(seq 1 "$last" | tr '\n' ' ')" ] || fail "follow seqs are not 1..$last once each: $seqs"
diff "$dir/events.out" "$dir/follow.out" >/dev/null || fail "follow output differs from the log"
"$bin" --data "$dir/data" "${store_args[@]}" check "$agent" >/dev/null 2>&1 || fail "turn invariants after the crash"

# ---- a token is enforced ----
token_args=(--token s3cret)
start_daemon --token s3cret
"$bin" agents ls >/dev/null 2>&1
[ $? -eq 1 ] || fail "a request without the token must fail with exit 1"
AGENTSTREAM_TOKEN=s3cret "$bin" agents ls >/dev/null || fail "AGENTSTREAM_TOKEN is not sent"
"$bin" history "$agent" --before nonsense >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad cursor is a usage error (exit 2)"

# ---- https through a TLS-terminating proxy ----
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null ||
  fail "openssl could not make a certificate"
tls_port=""
for candidate in $(shuf -i 20000-60000 -n 50); do
  [ "$candidate" = "$port" ] && continue
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then tls_port=$candidate; break; fi
done
[ -n "$tls_port" ] || fail "no free port for the proxy"
node "$(dirname "$0")/tls_proxy.mjs" "$dir/cert.pem" "$dir/key.pem" "$tls_port" "$port" \
  >"$dir/proxy.out" 2>&1 &
proxy_pid=$!
proxy_up() { grep -q listening "$dir/proxy.out"; }
until_true 10 proxy_up || fail "the TLS proxy did not start: $(cat "$dir/proxy.out")"
https_url="https://localhost:$tls_port"
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
tls_caught_up() { grep -q "\"seq\":$tls_last," "$dir/tls_follow.out"; }
until_true 30 tls_caught_up || fail "follow over https did not reach seq $tls_last: $(cat "$dir/tls_follow.err")"
kill "$follow_pid"; wait "$follow_pid" 2>/dev/null; follow_pid=""
[ "$(wc -l <"$dir/tls_follow.out")" -eq "$tls_last" ] || fail "follow over https: not $tls_last lines"
unset SSL_CERT_FILE
kill "$proxy_pid"; wait "$proxy_pid" 2>/dev/null

kill -TERM "$serve_pid"; wait "$serve_pid" 2>/dev/null; serve_pid=""
echo "cli client e2e: $last events followed across a daemon crash; all checks passed"

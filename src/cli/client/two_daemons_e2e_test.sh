#!/usr/bin/env bash
# Two daemons on one PostgreSQL database (STORE_URL, a postgresql:// URL): an agent created and
# driven through daemon A is listed, read and followed live through daemon B, and B's follow
# output is exactly the stored log.
#   two_daemons_e2e_test.sh AGENTSTREAM_BINARY STORE_URL
set -u
bin=$1
store=$2
dir=$(mktemp -d)
pids=()
follow_pid=""
cleanup() {
  [ -n "$follow_pid" ] && kill -9 "$follow_pid" 2>/dev/null
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for log in "$dir"/serve_*.log; do echo "--- $log"; tail -n 20 "$log"; done
  exit 1
}
until_true() {  # until_true SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.1
  done
}
free_port() {
  for candidate in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then echo "$candidate"; return; fi
  done
}
start_daemon() {  # start_daemon NAME PORT
  "$bin" --data "$dir/data_$1" --store "$store" serve --listen "127.0.0.1:$2" \
    >>"$dir/serve_$1.log" 2>&1 &
  pids+=($!)
  up_url="http://127.0.0.1:$2"
  up() { "$bin" --url "$up_url" agents ls >/dev/null 2>&1; }
  until_true 30 up || fail "daemon $1 did not start"
}
port_a=$(free_port)
start_daemon a "$port_a"
port_b=$(free_port)
[ "$port_b" != "$port_a" ] || port_b=$(free_port)
start_daemon b "$port_b"
a=(--url "http://127.0.0.1:$port_a")
b=(--url "http://127.0.0.1:$port_b")

agent=$("$bin" "${a[@]}" agents new --provider scripted --cwd "$dir" --title two) || fail "agents new on a"
"$bin" "${a[@]}" send "$agent" "first" --wait >/dev/null || fail "send on a"
"$bin" "${b[@]}" agents ls --json | grep -q "\"id\":\"$agent\"" || fail "daemon b does not list $agent"
"$bin" "${b[@]}" history "$agent" --json | grep -q '"text":"first"' || fail "daemon b's history lacks the prompt"

# Follow through b while a runs more turns: b hears a's commits live.
"$bin" "${b[@]}" follow "$agent" --json >"$dir/follow.out" 2>"$dir/follow.err" &
follow_pid=$!
for i in 1 2 3; do
  "$bin" "${a[@]}" send "$agent" "prompt $i" --wait >/dev/null || fail "send $i on a"
done
tail_seq=$("$bin" "${a[@]}" agents show "$agent" --json | grep -o '"cursor":"[0-9]*:[0-9]*"' | cut -d'"' -f4 | cut -d: -f2)
[ -n "$tail_seq" ] || fail "no cursor"
caught_up() { grep -q "\"seq\":$tail_seq," "$dir/follow.out"; }
until_true 20 caught_up || fail "follow through b did not reach seq $tail_seq ($(wc -l <"$dir/follow.out") lines)"
kill "$follow_pid"; wait "$follow_pid" 2>/dev/null; follow_pid=""
"$bin" --store "$store" events "$agent" --json --limit 10000 >"$dir/events.out" || fail "events"
diff "$dir/events.out" "$dir/follow.out" >/dev/null || fail "b's follow output differs from the stored log"
"$bin" --store "$store" check "$agent" >/dev/null || fail "turn invariants"
echo "two daemons e2e: $tail_seq events written through a, followed live through b"

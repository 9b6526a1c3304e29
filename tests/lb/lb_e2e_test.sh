#!/usr/bin/env bash
# Three daemons on one PostgreSQL database behind HAProxy, configured by docs/examples/haproxy.cfg
# (its addresses replaced): a client that only knows the load balancer creates an agent, sends,
# follows it live, answers a permission; the daemon running the agent is killed with SIGKILL, and
# the client's next sends and its follow go on through the load balancer, the follow seeing every
# event once; afterwards `agentstream check` is clean.
#   lb_e2e_test.sh AGENTSTREAM_BINARY LISTEN_FD_BINARY      (AGENTSTREAM_TEST_PG names the server)
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
listen_fd=$2
command -v haproxy >/dev/null || skip "haproxy is not installed (tools/setup.sh installs it)"
store=$(pg_database) || skip "AGENTSTREAM_TEST_PG is not set"
serve=(--store "$store" --scripted-chunk-ms 20 --owner-ttl-ms 2000 --owner-renew-ms 400)

# Each daemon behind a proxy of its own, so that it keeps one address for HAProxy when restarted.
for d in a b c; do
  start_daemon "$d" "${serve[@]}"
  start_proxy "front_$d" "$d"
done
config="$E2E_DIR/haproxy.cfg"
sed -e "s/bind 127.0.0.1:7600/bind fd@3/" \
  -e "s/127.0.0.1:7601/127.0.0.1:$front_a_port/" \
  -e "s/127.0.0.1:7602/127.0.0.1:$front_b_port/" \
  -e "s/127.0.0.1:7603/127.0.0.1:$front_c_port/" \
  "$(dirname "$0")/../../docs/examples/haproxy.cfg" >"$config"
"$listen_fd" "$E2E_DIR/lb.port" 3 haproxy -db -f "$config" >"$E2E_DIR/haproxy.log" 2>&1 &
track_pid $!
show_on_failure "$E2E_DIR/haproxy.log"
until_true 20 test -s "$E2E_DIR/lb.port" || fail "haproxy did not start"
lb="http://127.0.0.1:$(cat "$E2E_DIR/lb.port")"
client=(--url "$lb")
healthy() { curl -fsS "$lb/healthz" >/dev/null; }
until_true 20 healthy || fail "haproxy does not reach the daemons"

agent=$("$E2E_BIN" "${client[@]}" agents new --provider scripted --cwd "$E2E_DIR" --title lb) ||
  fail "agents new through the load balancer"
"$E2E_BIN" "${client[@]}" follow "$agent" --json >"$E2E_DIR/follow.out" 2>"$E2E_DIR/follow.err" &
follow_pid=$!
track_pid $follow_pid
show_on_failure "$E2E_DIR/follow.err"
for i in 1 2 3 4 5 6; do
  "$E2E_BIN" "${client[@]}" send "$agent" "prompt $i" --wait >/dev/null || fail "send $i"
done
# A permission through the load balancer: the answer reaches the runtime wherever it runs.
"$E2E_BIN" "${client[@]}" send "$agent" "ask permission please" >/dev/null || fail "send permission"
request=""
pending() {
  request=$("$E2E_BIN" "${client[@]}" agents show "$agent" --json |
    grep -o '"requestId":"[^"]*"' | head -1 | cut -d'"' -f4)
  [ -n "$request" ]
}
until_true 20 pending || fail "no permission request"
"$E2E_BIN" "${client[@]}" approve "$agent" "$request" >/dev/null || fail "approve through the load balancer"

# The owner dies; the client only knows the load balancer.
owner=$("$E2E_BIN" "${client[@]}" agents show "$agent" --json | grep -o '"owner":"[^"]*"' |
  cut -d'"' -f4)
victim=""
for d in a b c; do
  [ "$(cat "$(daemon_data "$d")/daemon.id")" = "$owner" ] && victim=$d
done
[ -n "$victim" ] || fail "no daemon owns $agent (owner '$owner')"
kill_daemon "$victim" KILL
# Each send is retried (the same client id: a retry never makes a second prompt) until it goes
# through or 60 s have passed: a takeover takes up to ttl + renew, longer on a loaded machine.
sent=0
for i in 7 8 9 10; do
  deadline=$((SECONDS + 60))
  until "$E2E_BIN" "${client[@]}" send "$agent" "prompt $i" --client-id "lb-$i" --wait >/dev/null 2>&1; do
    [ "$SECONDS" -ge "$deadline" ] && continue 2
    sleep 0.5
  done
  sent=$((sent + 1))
done
[ "$sent" -eq 4 ] || fail "only $sent of 4 sends went through after the owner died"
start_daemon "$victim" "${serve[@]}"

tail_seq=$("$E2E_BIN" "${client[@]}" agents show "$agent" --json |
  grep -o '"cursor":"[0-9]*:[0-9]*"' | cut -d'"' -f4 | cut -d: -f2)
caught_up() { grep -q "\"seq\":$tail_seq," "$E2E_DIR/follow.out"; }
until_true 30 caught_up || fail "the follow through the load balancer did not reach seq $tail_seq"
kill "$follow_pid"
"$E2E_BIN" --store "$store" events "$agent" --json --limit 10000 >"$E2E_DIR/events.out"
diff "$E2E_DIR/events.out" "$E2E_DIR/follow.out" >/dev/null ||
  fail "the follow's events differ from the stored log"
"$E2E_BIN" --store "$store" check >/dev/null || fail "check"
grep -q '"code":"owner_lost"\|"code":"daemon_restarted"' "$E2E_DIR/events.out" ||
  echo "(the owner was idle when it died: no turn to end)"
echo "lb e2e: $tail_seq events through HAProxy, the owner ($victim) killed, every event followed once"

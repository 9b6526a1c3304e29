#!/usr/bin/env bash
# Two `agentstream serve` daemons on one PostgreSQL database (a database of this test's own on
# the server of AGENTSTREAM_TEST_PG; skipped without it) serve the same generic Durable Streams:
# a stream written through one is read through the other; a long-poll and an SSE reader on b
# are woken by an append through a; one idempotent producer writing every append through both
# lands each exactly once; a producer whose daemon is killed mid-append retries through the
# other without a duplicate or a gap; a webhook subscription's wake is delivered once, not once
# per daemon, signed with the key both publish; a pull-wake token from one daemon is accepted
# by the other.
#   two_daemons_streams_e2e_test.sh AGENTSTREAM_BINARY
set -u
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
dir=$E2E_DIR
[ -n "${AGENTSTREAM_TEST_PG:-}" ] || skip "AGENTSTREAM_TEST_PG is not set"
store=$(pg_database) || fail "no database of its own"
unset AGENTSTREAM_TOKEN AGENTSTREAM_URL
start_daemon a --store "$store" --long-poll-ms 20000
start_daemon b --store "$store" --long-poll-ms 20000

# curl METHOD URL [ARGS...]: prints the body; the status goes to $dir/status.
req() {
  local method=$1 url=$2
  shift 2
  curl -s -o "$dir/body" -w '%{http_code}' -X "$method" "$@" "$url" >"$dir/status" || echo 000 >"$dir/status"
  cat "$dir/body"
}
status() { cat "$dir/status"; }
json=(-H 'content-type: application/json')
text=(-H 'content-type: text/plain')

# Written through a, read through b.
req PUT "$a_url/v1/stream/e2e/one" "${text[@]}" --data-binary 'hello ' >/dev/null
[ "$(status)" = 201 ] || fail "create on a: $(status)"
req POST "$b_url/v1/stream/e2e/one" "${text[@]}" --data-binary 'world' >/dev/null
[ "$(status)" = 204 ] || fail "append on b: $(status)"
[ "$(req GET "$a_url/v1/stream/e2e/one?offset=-1")" = "hello world" ] || fail "a reads $(cat "$dir/body")"
[ "$(req PUT "$b_url/v1/stream/e2e/one" "${text[@]}" >/dev/null; status)" = 200 ] || fail "re-create on b"

# A long-poll on b, from the tail, is answered by an append through a (not by its 20 s timeout).
tail_offset=$(curl -s -I "$b_url/v1/stream/e2e/one" | tr -d '\r' | sed -n 's/^[Ss]tream-[Nn]ext-[Oo]ffset: //p')
[ -n "$tail_offset" ] || fail "no tail"
start=$SECONDS
curl -s -o "$dir/poll.out" -w '%{http_code}' "$b_url/v1/stream/e2e/one?offset=$tail_offset&live=long-poll" >"$dir/poll.status" &
poll=$!
track_pid "$poll"
curl -s -N "$b_url/v1/stream/e2e/one?offset=$tail_offset&live=sse" >"$dir/sse.out" &
track_pid $!
sleep 0.5
req POST "$a_url/v1/stream/e2e/one" "${text[@]}" --data-binary '!' >/dev/null
wait "$poll"
[ "$(cat "$dir/poll.status")" = 200 ] && [ "$(cat "$dir/poll.out")" = "!" ] ||
  fail "the long-poll on b answered $(cat "$dir/poll.status") '$(cat "$dir/poll.out")'"
[ $((SECONDS - start)) -lt 10 ] || fail "the long-poll on b waited for its timeout"
sse_data() { grep -q '^data:!$' "$dir/sse.out"; }
until_true 10 sse_data || fail "the SSE reader on b did not get a's append: $(cat "$dir/sse.out")"

# One idempotent producer sends every append through both daemons at once.
req PUT "$a_url/v1/stream/e2e/producer" "${text[@]}" >/dev/null
send_all() {
  local url=$1 seq
  for seq in $(seq 0 39); do
    curl -s -o /dev/null -w '%{http_code}\n' -X POST "$url/v1/stream/e2e/producer" "${text[@]}" \
      -H 'Producer-Id: p' -H 'Producer-Epoch: 0' -H "Producer-Seq: $seq" --data-binary "$seq," ||
      echo 000
  done
}
send_all "$a_url" >"$dir/pa.codes" &
pa=$!
send_all "$b_url" >"$dir/pb.codes" &
pb=$!
wait "$pa" "$pb"
expected=$(seq 0 39 | tr '\n' ',')
got=$(req GET "$b_url/v1/stream/e2e/producer?offset=-1")
[ "$got" = "$expected" ] || fail "the producer's stream holds '$got'"
[ "$(grep -c '^200$' "$dir/pa.codes" "$dir/pb.codes" | awk -F: '{s+=$2} END {print s}')" = 40 ] ||
  fail "not 40 appends accepted once: $(sort "$dir/pa.codes" "$dir/pb.codes" | uniq -c | tr '\n' ' ')"
! grep -qv '^20[04]$' "$dir/pa.codes" "$dir/pb.codes" || fail "an append failed"

# A producer appends through a until a is killed; it resumes through b, retrying its last seq.
req PUT "$a_url/v1/stream/e2e/crash" "${text[@]}" >/dev/null
(
  seq=0
  while curl -s -f -o /dev/null -X POST "$a_url/v1/stream/e2e/crash" "${text[@]}" \
    -H 'Producer-Id: c' -H 'Producer-Epoch: 0' -H "Producer-Seq: $seq" --data-binary "$seq,"; do
    echo "$seq" >"$dir/crash.acked"
    seq=$((seq + 1))
  done
) &
writer=$!
track_pid "$writer"
sleep 1
kill_daemon a KILL
wait "$writer" 2>/dev/null
acked=$(cat "$dir/crash.acked" 2>/dev/null || echo -1)
# The append in flight at the kill may or may not have been committed: its retry is either
# accepted or a duplicate, never a gap.
for seq in $((acked + 1)) $((acked + 2)); do
  req POST "$b_url/v1/stream/e2e/crash" "${text[@]}" -H 'Producer-Id: c' -H 'Producer-Epoch: 0' \
    -H "Producer-Seq: $seq" --data-binary "$seq," >/dev/null
  case "$(status)" in 200 | 204) ;; *) fail "retry of seq $seq through b: $(status) $(cat "$dir/body")" ;; esac
done
got=$(req GET "$b_url/v1/stream/e2e/crash?offset=-1")
[ "$got" = "$(seq 0 $((acked + 2)) | tr '\n' ',')" ] || fail "after the kill the stream holds '$got' (acked $acked)"
start_daemon a --store "$store" --long-poll-ms 20000

# A webhook subscription created through a; a stream it follows is created through b: one POST.
node -e '
const http = require("http");
let n = 0;
http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    n++;
    require("fs").appendFileSync(process.argv[1], JSON.stringify({sig: req.headers["webhook-signature"], body: JSON.parse(body)}) + "\n");
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({done: true}));
  });
}).listen(0, "127.0.0.1", function () { console.log("listening " + this.address().port); });
' "$dir/hooks.jsonl" >"$dir/receiver.out" 2>&1 &
track_pid $!
show_on_failure "$dir/receiver.out" "$dir/hooks.jsonl"
hook_port=$(wait_for_output "$dir/receiver.out" '^listening ([0-9]+)$' 30) || fail "no webhook receiver"
req PUT "$a_url/v1/stream/__ds/subscriptions/hook" "${json[@]}" \
  --data "{\"type\":\"webhook\",\"pattern\":\"hooks/*\",\"webhook\":{\"url\":\"http://127.0.0.1:$hook_port/hook\"},\"lease_ttl_ms\":5000}" >/dev/null
[ "$(status)" = 201 ] || fail "webhook subscription: $(status) $(cat "$dir/body")"
sleep 1.5  # both daemons know the subscription (they look for new ones every second)
req PUT "$b_url/v1/stream/hooks/x" "${json[@]}" --data '{"n":1}' >/dev/null
delivered() { [ -s "$dir/hooks.jsonl" ]; }
until_true 15 delivered || fail "no webhook delivery"
sleep 2
[ "$(wc -l <"$dir/hooks.jsonl")" = 1 ] || fail "the wake was delivered $(wc -l <"$dir/hooks.jsonl") times"
kid_a=$(req GET "$a_url/v1/stream/__ds/jwks.json" | grep -o '"kid":"[^"]*"')
kid_b=$(req GET "$b_url/v1/stream/__ds/jwks.json" | grep -o '"kid":"[^"]*"')
[ -n "$kid_a" ] && [ "$kid_a" = "$kid_b" ] || fail "the daemons publish different keys: $kid_a $kid_b"
grep -q "kid=${kid_a:7:-1}," "$dir/hooks.jsonl" || fail "the webhook was not signed with the published key"
acked_done() {
  req GET "$b_url/v1/stream/__ds/subscriptions/hook" | grep -q '"acked_offset":"0000000000000000_'
}
until_true 10 acked_done || fail "the synchronous done was not acknowledged: $(cat "$dir/body")"

# Pull-wake: claimed through b, acknowledged through a with b's token.
req PUT "$a_url/v1/stream/wake/pool" "${json[@]}" --data '[]' >/dev/null
req PUT "$a_url/v1/stream/__ds/subscriptions/pull" "${json[@]}" \
  --data '{"type":"pull-wake","streams":["jobs/j"],"wake_stream":"wake/pool"}' >/dev/null
[ "$(status)" = 201 ] || fail "pull-wake subscription: $(status)"
req PUT "$a_url/v1/stream/jobs/j" "${json[@]}" >/dev/null
req POST "$a_url/v1/stream/jobs/j" "${json[@]}" --data '{"job":1}' >/dev/null
claim=$(req POST "$b_url/v1/stream/__ds/subscriptions/pull/claim" "${json[@]}" --data '{"worker":"w"}')
[ "$(status)" = 200 ] || fail "claim through b: $(status) $claim"
token=$(echo "$claim" | grep -o '"token":"[^"]*"' | cut -d'"' -f4)
wake=$(echo "$claim" | grep -o '"wake_id":"[^"]*"' | cut -d'"' -f4)
gen=$(echo "$claim" | grep -o '"generation":[0-9]*' | cut -d: -f2)
req POST "$a_url/v1/stream/__ds/subscriptions/pull/claim" "${json[@]}" --data '{"worker":"x"}' >/dev/null
[ "$(status)" = 409 ] || fail "a second claim through a: $(status)"
req POST "$a_url/v1/stream/__ds/subscriptions/pull/ack" "${json[@]}" -H "authorization: Bearer $token" \
  --data "{\"wake_id\":\"$wake\",\"generation\":$gen,\"done\":true}" >/dev/null
[ "$(status)" = 200 ] || fail "b's token through a: $(status) $(cat "$dir/body")"
echo "two daemons streams e2e: reads, live wakes, producers, a killed daemon, one webhook, shared tokens"

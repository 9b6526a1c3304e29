#!/usr/bin/env bash
# Pairing and paired devices end to end (docs/remote.md, "Pairing a phone"; docs/cli.md): on one
# daemon with a token, `agentstream pair` prints a link and its QR code, the device exchanges the
# code for its own token, `devices ls|rename|revoke` manage it, and a revoked token is refused.
# Then, when AGENTSTREAM_TEST_PG names a server, two daemons share a database of this test's
# own: a device paired through daemon A holds a WebSocket on daemon B; revoking it on A closes
# that WebSocket within a second, and its next request on B is refused with 401.
#   devices_e2e_test.sh AGENTSTREAM_BINARY
set -u
source "$(cd "$(dirname "$0")/../../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
dir=$E2E_DIR
unset AGENTSTREAM_TOKEN AGENTSTREAM_URL
owner=0wner-token

exchange() {  # exchange URL CODE: the device token the code is exchanged for
  curl -s -X POST -H 'User-Agent: e2e-phone/1' --data "{\"code\":\"$2\"}" \
    "$1/v1/pairings/exchange" | grep -o '"token":"asd_[A-Za-z0-9_-]*"' | cut -d'"' -f4
}
status() {  # status URL TOKEN: the HTTP status of GET /v1/agents with TOKEN
  curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $2" "$1/v1/agents"
}

start_daemon a --token "$owner"
a=(--url "$a_url" --token "$owner")

# The QR code and the link; the link's code pairs one device, once.
"$bin" "${a[@]}" pair --name phone --expires 5m >"$dir/pair.out" || fail "pair: $(cat "$dir/pair.out")"
grep -q '█' "$dir/pair.out" || fail "pair printed no QR code"
url=$(grep -o "$a_url/#pair=asp_[A-Za-z0-9_-]*" "$dir/pair.out") || fail "pair printed no link"
code=${url##*#pair=}
[ ${#code} -eq 36 ] || fail "pairing code '$code'"
token=$(exchange "$a_url" "$code")
[ ${#token} -eq 47 ] || fail "device token '$token'"
[ -z "$(exchange "$a_url" "$code")" ] || fail "a used code paired a second device"
[ "$(status "$a_url" "$token")" = 200 ] || fail "the device token is refused"
curl -s -H "Authorization: Bearer $token" "$a_url/v1/whoami" | grep -q '"principal":"device"' ||
  fail "whoami does not name the device"

"$bin" "${a[@]}" pair --no-qr --json --name tablet --expires 90s >"$dir/pair.json" || fail "pair --json"
grep -q '"code":"asp_' "$dir/pair.json" || fail "pair --json: $(cat "$dir/pair.json")"
if grep -q '█' "$dir/pair.json"; then fail "pair --json printed a QR code"; fi
"$bin" "${a[@]}" pair --no-qr --public-url https://box.example.ts.net/ >"$dir/pair.txt" ||
  fail "pair --public-url"
grep -q '^https://box.example.ts.net/#pair=asp_' "$dir/pair.txt" || fail "$(cat "$dir/pair.txt")"
# Bad input: refused with a usage error, nothing paired.
"$bin" "${a[@]}" pair --expires 5x >"$dir/bad.out" 2>&1
[ $? -eq 2 ] || fail "pair --expires 5x: $(cat "$dir/bad.out")"
"$bin" "${a[@]}" pair --public-url http://10.0.0.5:7600 >"$dir/bad.out" 2>&1
[ $? -eq 2 ] && grep -q 'plain http' "$dir/bad.out" || fail "pair --public-url http://: $(cat "$dir/bad.out")"
"$bin" "${a[@]}" pair --expires 5s >"$dir/bad.out" 2>&1 && fail "pair --expires 5s succeeded"
grep -q '10 s to 24 h' "$dir/bad.out" || fail "pair --expires 5s: $(cat "$dir/bad.out")"

"$bin" "${a[@]}" devices ls >"$dir/ls.out" || fail "devices ls"
grep -q '^dev_[0-9a-f]* *phone *active *last seen 20' "$dir/ls.out" || fail "devices ls: $(cat "$dir/ls.out")"
id=$("$bin" "${a[@]}" devices ls --json | grep -o '"id":"dev_[0-9a-f]*"' | head -1 | cut -d'"' -f4)
"$bin" "${a[@]}" devices rename "$id" "kitchen tablet" >/dev/null || fail "devices rename"
"$bin" "${a[@]}" devices ls --json | grep -q '"name":"kitchen tablet"' || fail "not renamed"
"$bin" "${a[@]}" devices rename "$id" "" >"$dir/bad.out" 2>&1 && fail "an empty name was taken"
"$bin" "${a[@]}" devices revoke "$id" | grep -q 'revoked' || fail "devices revoke"
[ "$(status "$a_url" "$token")" = 401 ] || fail "a revoked token is still taken"
"$bin" "${a[@]}" devices revoke dev_none >"$dir/bad.out" 2>&1 && fail "revoking an unknown device succeeded"
kill_daemon a
echo "devices e2e: paired, renamed and revoked on one daemon"

[ -n "${AGENTSTREAM_TEST_PG:-}" ] || exit 0
store=$(pg_database) || fail "no database of its own"
start_daemon p --store "$store" --token "$owner"
start_daemon q --store "$store" --token "$owner"
p=(--url "$p_url" --token "$owner")
code=$("$bin" "${p[@]}" pair --json --name phone | grep -o '"code":"asp_[A-Za-z0-9_-]*"' | cut -d'"' -f4)
token=$(exchange "$p_url" "$code")
[ -n "$token" ] || fail "no token from daemon p"
id=$(curl -s -H "Authorization: Bearer $token" "$q_url/v1/whoami" | grep -o '"id":"dev_[0-9a-f]*"' | cut -d'"' -f4)
[ -n "$id" ] || fail "daemon q does not know the device"
# The device's WebSocket on q (Node's WebSocket client).
node --experimental-websocket --no-warnings -e '
  const ws = new WebSocket(process.argv[1]);
  ws.onopen = () => console.log("open");
  ws.onclose = (e) => { console.log(`closed ${e.code} ${Date.now()}`); process.exit(0); };
  setTimeout(() => process.exit(3), 30000);
' "${q_url/http/ws}/ws?token=$token" >"$dir/ws.out" 2>&1 &
track_pid $!
show_on_failure "$dir/ws.out"
wait_for_output "$dir/ws.out" '^(open)$' 20 >/dev/null || fail "the device's WebSocket on q did not open"
"$bin" "${p[@]}" devices revoke "$id" >/dev/null || fail "devices revoke on p"
wait_for_output "$dir/ws.out" '^(closed) ' 5 >/dev/null || fail "the WebSocket on q stayed open"
closed_ms=$(grep -o '^closed [0-9]* [0-9]*' "$dir/ws.out" | cut -d' ' -f3)
# The revocation's moment is p's log line for it (written once the store holds it), not the
# start of the CLI, whose own start-up is no part of the promise.
revoked_at=$(grep -o "^[0-9T:.-]*Z INFO devices.revoked device=$id" "$dir/p.log" | cut -d' ' -f1)
[ -n "$revoked_at" ] || fail "daemon p did not log the revocation"
revoked_ms=$(date -d "$revoked_at" +%s%3N)
[ $((closed_ms - revoked_ms)) -lt 1000 ] ||
  fail "the WebSocket on q closed $((closed_ms - revoked_ms)) ms after the revocation"
[ "$(status "$q_url" "$token")" = 401 ] || fail "daemon q still takes the revoked token"
echo "devices e2e: revoked on p, the WebSocket on q closed after $((closed_ms - revoked_ms)) ms"

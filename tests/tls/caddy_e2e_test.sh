#!/usr/bin/env bash
# The daemon behind a real reverse proxy (docs/operations.md, "Behind a reverse proxy"): Caddy with
# its own CA (`tls internal`, its data in this test's directory, nothing trusted system-wide) in
# front of `serve --token --trusted-proxy 127.0.0.1/32 --allow-host NAME`. Through Caddy, with the
# token: the page (with Caddy's HSTS), /ws (Node's WebSocket client), a session log's SSE read, a
# Durable Stream read (its Location naming https://NAME:PORT) and /mcp's initialize; without it
# 401, though Caddy connects from loopback. The page's Origin https://NAME:PORT is its own; another
# is refused. A second daemon without a token behind the same Caddy serves a client on this
# machine as its owner, and one from this machine's network address (when it has one) not.
# Forwarded headers sent straight to the daemon from 127.0.0.2 (not a trusted proxy) change
# nothing, the same from 127.0.0.1 are read; a client's forged X-Forwarded-For through Caddy does
# not name the client either.
#   caddy_e2e_test.sh AGENTSTREAM_BINARY
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v caddy >/dev/null || skip "caddy is not installed (tools/setup.sh installs it)"

token=caddy-e2e-token
name=agents.example.test
mkdir -p "$E2E_DIR/web" "$E2E_DIR/work"
echo '<!doctype html><title>caddy-e2e page</title>' >"$E2E_DIR/web/index.html"
start_daemon d --store memory: --token "$token" --trusted-proxy 127.0.0.1/32 --allow-host "$name" \
  --web-root "$E2E_DIR/web" --log-level debug
open_name=open.example.test
start_daemon open --store memory: --trusted-proxy 127.0.0.1/32 --allow-host "$open_name"
log=$E2E_DIR/d.log

# Caddy 2.6 cannot be handed a listening socket (tests/lib/listen_fd), so it gets a port the kernel
# just gave out and took back; a start that loses that port to another process is tried again.
caddy_home=$E2E_DIR/caddy
ca=$caddy_home/data/caddy/pki/authorities/local/root.crt
mkdir -p "$caddy_home"
show_on_failure "$caddy_home/caddy.log"
caddy_ready() {
  [ -f "$ca" ] && curl -s -o /dev/null --max-time 1 --cacert "$ca" "https://localhost:$port/healthz"
}
for attempt in 1 2 3; do
  port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => {
    console.log(s.address().port); s.close(); })')
  cat >"$caddy_home/Caddyfile" <<EOF
{
	admin off
	skip_install_trust
	auto_https disable_redirects
}
https://localhost:$port, https://$name:$port {
	tls internal
	header Strict-Transport-Security "max-age=31536000"
	reverse_proxy 127.0.0.1:$d_port
}
https://$open_name:$port {
	tls internal
	reverse_proxy 127.0.0.1:$open_port
}
EOF
  XDG_DATA_HOME=$caddy_home/data XDG_CONFIG_HOME=$caddy_home/config HOME=$caddy_home \
    caddy run --config "$caddy_home/Caddyfile" --adapter caddyfile >>"$caddy_home/caddy.log" 2>&1 &
  caddy_pid=$!
  track_pid "$caddy_pid"
  if until_true 15 caddy_ready; then break; fi
  kill "$caddy_pid" 2>/dev/null || true
  [ "$attempt" = 3 ] && fail "caddy did not start"
done

base="https://$name:$port"
c=(curl --silent --show-error --max-time 10 --cacert "$ca" --resolve "$name:$port:127.0.0.1")
auth=(-H "Authorization: Bearer $token")
status() { "${c[@]}" -o "$E2E_DIR/body" -w '%{http_code}' "$@"; }

# The page: public, HSTS from Caddy (the daemon sends it only on its own TLS).
"${c[@]}" --dump-header "$E2E_DIR/page.h" "$base/" >"$E2E_DIR/page.out" || fail "GET / via caddy"
grep -q '^HTTP/[0-9.]* 200' "$E2E_DIR/page.h" || fail "GET /: $(cat "$E2E_DIR/page.h")"
grep -q 'caddy-e2e page' "$E2E_DIR/page.out" ||
  fail "GET / is not index.html: $(cat "$E2E_DIR/page.out")"
grep -qi '^strict-transport-security: max-age=31536000' "$E2E_DIR/page.h" ||
  fail "no HSTS through caddy: $(cat "$E2E_DIR/page.h")"

# The API: 401 without the token though Caddy connects from loopback, 200 with it.
[ "$(status "$base/v1/agents")" = 401 ] || fail "no token via caddy: $(cat "$E2E_DIR/body")"
[ "$(status "${auth[@]}" "$base/v1/agents")" = 200 ] ||
  fail "token via caddy: $(cat "$E2E_DIR/body")"
created=$("${c[@]}" "${auth[@]}" -H 'Content-Type: application/json' \
  -d "{\"provider\":\"scripted\",\"cwd\":\"$E2E_DIR/work\"}" "$base/v1/agents") ||
  fail "POST /v1/agents via caddy"
agent=$(node -e 'console.log(JSON.parse(process.argv[1]).id)' "$created") || fail "create: $created"

# The page's own origin (https://NAME:PORT) may call the API; another may not.
[ "$(status "${auth[@]}" -H "Origin: $base" "$base/v1/agents")" = 200 ] ||
  fail "the page's origin was refused: $(cat "$E2E_DIR/body")"
[ "$(status "${auth[@]}" -H "Origin: https://evil.example" "$base/v1/agents")" = 403 ] ||
  fail "a foreign origin was let through: $(cat "$E2E_DIR/body")"

# The session log's SSE read, through Caddy's streaming proxy.
"${c[@]}" "${auth[@]}" --max-time 3 --no-buffer --dump-header "$E2E_DIR/sse.h" \
  "$base/v1/agents/$agent/events?offset=-1&live=sse" >"$E2E_DIR/sse.out" 2>/dev/null || true
grep -qi '^content-type: text/event-stream' "$E2E_DIR/sse.h" ||
  fail "SSE head: $(cat "$E2E_DIR/sse.h")"
grep -q '^event: control' "$E2E_DIR/sse.out" || fail "SSE body: $(cat "$E2E_DIR/sse.out")"

# A Durable Stream: its Location names the origin the client used; appended and read back.
"${c[@]}" "${auth[@]}" -X PUT --dump-header "$E2E_DIR/put.h" -H 'Content-Type: text/plain' \
  "$base/v1/stream/caddy-e2e" >/dev/null || fail "PUT /v1/stream/caddy-e2e"
grep -qi "^location: $base/v1/stream/caddy-e2e" "$E2E_DIR/put.h" ||
  fail "Location is not the forwarded origin: $(cat "$E2E_DIR/put.h")"
"${c[@]}" "${auth[@]}" -H 'Content-Type: text/plain' -d 'through-caddy' \
  "$base/v1/stream/caddy-e2e" >/dev/null || fail "POST /v1/stream/caddy-e2e"
"${c[@]}" "${auth[@]}" "$base/v1/stream/caddy-e2e?offset=-1" >"$E2E_DIR/stream.out" ||
  fail "GET /v1/stream/caddy-e2e"
grep -q 'through-caddy' "$E2E_DIR/stream.out" || fail "stream read: $(cat "$E2E_DIR/stream.out")"
[ "$(status "$base/v1/stream/caddy-e2e?offset=-1")" = 401 ] || fail "stream read without the token"

# /ws with Node's WebSocket client (the token in the query, as a browser sends it).
export NODE_EXTRA_CA_CERTS=$ca
ws=(node --no-warnings --experimental-websocket "$here/ws_probe.mjs")
"${ws[@]}" "wss://localhost:$port/ws?token=$token" >"$E2E_DIR/ws.out" 2>&1 ||
  fail "WebSocket via caddy: $(cat "$E2E_DIR/ws.out")"
grep -q '"type":"server_info"' "$E2E_DIR/ws.out" || fail "WebSocket reply: $(cat "$E2E_DIR/ws.out")"
if "${ws[@]}" "wss://localhost:$port/ws" >"$E2E_DIR/ws-refused.out" 2>&1; then
  fail "a WebSocket without the token was accepted: $(cat "$E2E_DIR/ws-refused.out")"
fi

# /mcp: initialize.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26",'
init+='"capabilities":{},"clientInfo":{"name":"caddy-e2e","version":"1"}}}'
mcp=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream'
  -d "$init")
[ "$(status "${auth[@]}" "${mcp[@]}" "$base/mcp")" = 200 ] ||
  fail "/mcp via caddy: $(cat "$E2E_DIR/body")"
grep -q '"serverInfo"' "$E2E_DIR/body" || fail "/mcp initialize: $(cat "$E2E_DIR/body")"
[ "$(status "${mcp[@]}" "$base/mcp")" = 401 ] ||
  fail "/mcp without the token: $(cat "$E2E_DIR/body")"

# The client the daemon sees through Caddy is Caddy's X-Forwarded-For (a client's own forged one
# is not passed on by Caddy), with Caddy named as the proxy in the access log.
"${c[@]}" "${auth[@]}" --interface 127.0.0.3 -H 'X-Forwarded-For: 203.0.113.9' \
  "$base/v1/agents?via=caddy" >/dev/null || fail "GET via caddy from 127.0.0.3"
line='server.request method=GET route=/v1/agents status=200'
until_true 5 grep -q "$line client=127.0.0.3 proxy=127.0.0.1" "$log" ||
  fail "the access log does not name the forwarded client 127.0.0.3"

# Without a token, a client on this machine is the owner through Caddy too; a client from
# elsewhere is not, though Caddy connects from loopback (this machine's own network address stands
# for another machine).
open_c=(curl --silent --max-time 10 -o "$E2E_DIR/body" -w '%{http_code}' --cacert "$ca")
[ "$("${open_c[@]}" --resolve "$open_name:$port:127.0.0.1" "https://$open_name:$port/v1/agents")" \
  = 200 ] || fail "a loopback client via caddy is not the owner: $(cat "$E2E_DIR/body")"
grep -q 'daemon.proxy_without_token trusted_proxies=1' "$E2E_DIR/open.log" ||
  fail "no warning that a proxied daemon has no token"
lan=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
if [ -n "$lan" ]; then
  [ "$("${open_c[@]}" --resolve "$open_name:$port:$lan" "https://$open_name:$port/v1/agents")" \
    = 401 ] || fail "a client from $lan via caddy was the owner: $(cat "$E2E_DIR/body")"
  grep -q 'no --token' "$E2E_DIR/body" || fail "401 without the reason: $(cat "$E2E_DIR/body")"
else
  echo "no network address besides loopback: the remote-client check is left out"
fi

# Straight to the daemon from 127.0.0.2, not a trusted proxy: forwarded headers change nothing.
direct=(curl --silent --max-time 10 -o "$E2E_DIR/body" -w '%{http_code}' "${auth[@]}")
forged=(-H 'X-Forwarded-For: 203.0.113.9' -H 'X-Forwarded-Proto: gopher'
  -H 'X-Forwarded-Host: evil.example')
[ "$("${direct[@]}" --interface 127.0.0.2 "${forged[@]}" "$d_url/v1/agents")" = 200 ] ||
  fail "forged headers from 127.0.0.2 were read: $(cat "$E2E_DIR/body")"
until_true 5 grep -q "$line client=127.0.0.2\$" "$log" ||
  fail "the access log does not name 127.0.0.2"
if grep -q '203\.0\.113\.9' "$log"; then fail "a forged X-Forwarded-For reached the log"; fi
# The same from 127.0.0.1, the trusted proxy's address, are read: refused as malformed.
[ "$("${direct[@]}" "${forged[@]}" "$d_url/v1/agents")" = 400 ] ||
  fail "forwarded headers from the trusted proxy's address were not read: $(cat "$E2E_DIR/body")"
[ "$("${direct[@]}" -H 'X-Forwarded-Host: evil.example' "$d_url/v1/agents")" = 403 ] ||
  fail "a forwarded Host outside the allow-list was let through: $(cat "$E2E_DIR/body")"
echo "PASS"

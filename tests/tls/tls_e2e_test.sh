#!/usr/bin/env bash
# HTTPS on the daemon (docs/operations.md, "TLS"): `serve --tls-cert --tls-key` with a
# self-signed certificate serves /healthz, the page, the agents API, a session log's SSE read, the
# Durable Streams' reads, the WebSocket upgrade (and a hello answered to Node's WebSocket client)
# and /mcp's initialize over TLS on one port, every response with Strict-Transport-Security;
# plain HTTP to that port and TLS 1.1 are refused; a certificate replaced on disk is presented to
# new connections within seconds, without a restart, and a broken one then keeps the old one;
# one of the two options alone, or an unreadable key, stops `serve` with exit 2.
#   tls_e2e_test.sh AGENTSTREAM_BINARY
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
log="$E2E_DIR/d.log"

# make_cert NAME CN: a self-signed certificate for localhost and 127.0.0.1 in NAME.crt, NAME.key.
make_cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj "/CN=$2" -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$E2E_DIR/$1.key" -out "$E2E_DIR/$1.crt" 2>/dev/null || fail "openssl req $1"
}
make_cert one first-cert
make_cert two second-cert

# The options' errors: exit 2 and a message naming what is wrong.
expect_refused() {
  local want=$1 out=$E2E_DIR/refused.out code=0
  shift
  "$E2E_BIN" --store memory: serve --listen 127.0.0.1:0 "$@" >"$out" 2>&1 || code=$?
  [ "$code" = 2 ] || fail "serve $*: exit $code, want 2: $(cat "$out")"
  grep -q -- "$want" "$out" || fail "serve $*: no '$want' in: $(cat "$out")"
}
expect_refused "--tls-cert and --tls-key go together" --tls-cert "$E2E_DIR/one.crt"
expect_refused "--tls-cert and --tls-key go together" --tls-key "$E2E_DIR/one.key"
expect_refused "$E2E_DIR/missing.key" --tls-cert "$E2E_DIR/one.crt" --tls-key "$E2E_DIR/missing.key"
expect_refused "$E2E_DIR/one.crt" --tls-cert "$E2E_DIR/one.crt" --tls-key "$E2E_DIR/one.crt"

# The daemon serves TLS with a copy of the first certificate, replaced later.
cp "$E2E_DIR/one.crt" "$E2E_DIR/serve.crt"
cp "$E2E_DIR/one.key" "$E2E_DIR/serve.key"
mkdir -p "$E2E_DIR/web"
echo '<!doctype html><title>tls-e2e page</title>' >"$E2E_DIR/web/index.html"
start_daemon d --store memory: --tls-cert "$E2E_DIR/serve.crt" --tls-key "$E2E_DIR/serve.key" \
  --web-root "$E2E_DIR/web"
[[ $d_url == https://127.0.0.1:* ]] || fail "serving on $d_url, want https://"
base="https://localhost:$d_port"
tls=(--silent --show-error --max-time 10 --cacert "$E2E_DIR/one.crt")

curl "${tls[@]}" --dump-header "$E2E_DIR/health.h" "$base/healthz" >"$E2E_DIR/health.out" ||
  fail "GET /healthz over TLS"
grep -qi '^strict-transport-security: max-age=31536000' "$E2E_DIR/health.h" ||
  fail "no HSTS header: $(cat "$E2E_DIR/health.h")"
grep -q '^HTTP/1.1 200' "$E2E_DIR/health.h" || fail "/healthz: $(cat "$E2E_DIR/health.h")"

mkdir -p "$E2E_DIR/work"
created=$(curl "${tls[@]}" -H 'Content-Type: application/json' \
  -d "{\"provider\":\"scripted\",\"cwd\":\"$E2E_DIR/work\"}" "$base/v1/agents") ||
  fail "POST /v1/agents over TLS"
agent=$(node -e 'console.log(JSON.parse(process.argv[1]).id)' "$created") || fail "create: $created"
curl "${tls[@]}" "$base/v1/agents" | grep -q "\"$agent\"" || fail "GET /v1/agents lacks $agent"

# The session log's SSE read: the response head (with HSTS) and its first control event.
curl "${tls[@]}" --max-time 3 --no-buffer --dump-header "$E2E_DIR/sse.h" \
  "$base/v1/agents/$agent/events?offset=-1&live=sse" >"$E2E_DIR/sse.out" 2>/dev/null || true
grep -qi '^content-type: text/event-stream' "$E2E_DIR/sse.h" || fail "SSE head: $(cat "$E2E_DIR/sse.h")"
grep -qi '^strict-transport-security: max-age=31536000' "$E2E_DIR/sse.h" || fail "SSE without HSTS"
grep -q '^event: control' "$E2E_DIR/sse.out" || fail "SSE body: $(cat "$E2E_DIR/sse.out")"

# A generic Durable Stream: created, appended and read back over TLS.
curl "${tls[@]}" -X PUT -H 'Content-Type: text/plain' "$base/v1/stream/tls-e2e" >/dev/null ||
  fail "PUT /v1/stream/tls-e2e"
curl "${tls[@]}" -X POST -H 'Content-Type: text/plain' -d 'over-tls' "$base/v1/stream/tls-e2e" \
  >/dev/null || fail "POST /v1/stream/tls-e2e"
curl "${tls[@]}" --dump-header "$E2E_DIR/stream.h" "$base/v1/stream/tls-e2e?offset=-1" \
  >"$E2E_DIR/stream.out" || fail "GET /v1/stream/tls-e2e"
grep -q 'over-tls' "$E2E_DIR/stream.out" || fail "stream read: $(cat "$E2E_DIR/stream.out")"
grep -qi '^strict-transport-security: max-age=31536000' "$E2E_DIR/stream.h" ||
  fail "stream read without HSTS: $(cat "$E2E_DIR/stream.h")"

# The WebSocket upgrade at /ws: 101 over TLS.
curl "${tls[@]}" --max-time 3 --http1.1 --include --no-buffer -H 'Connection: Upgrade' \
  -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
  -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "$base/ws" >"$E2E_DIR/ws.out" 2>/dev/null || true
grep -q '^HTTP/1.1 101' "$E2E_DIR/ws.out" || fail "WebSocket upgrade: $(cat "$E2E_DIR/ws.out")"
grep -qi '^strict-transport-security: max-age=31536000' "$E2E_DIR/ws.out" || fail "101 without HSTS"
NODE_EXTRA_CA_CERTS=$E2E_DIR/one.crt node --no-warnings --experimental-websocket \
  "$(dirname "$0")/ws_probe.mjs" "wss://localhost:$d_port/ws" >"$E2E_DIR/ws-probe.out" 2>&1 ||
  fail "WebSocket hello over TLS: $(cat "$E2E_DIR/ws-probe.out")"

# The page and /mcp's initialize.
curl "${tls[@]}" --dump-header "$E2E_DIR/page.h" "$base/" >"$E2E_DIR/page.out" || fail "GET /"
grep -q 'tls-e2e page' "$E2E_DIR/page.out" ||
  fail "GET / is not index.html: $(cat "$E2E_DIR/page.out")"
grep -qi '^strict-transport-security: max-age=31536000' "$E2E_DIR/page.h" ||
  fail "page without HSTS"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26",'
init+='"capabilities":{},"clientInfo":{"name":"tls-e2e","version":"1"}}}'
curl "${tls[@]}" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -d "$init" "$base/mcp" >"$E2E_DIR/mcp.out" ||
  fail "POST /mcp over TLS"
grep -q '"serverInfo"' "$E2E_DIR/mcp.out" || fail "/mcp initialize: $(cat "$E2E_DIR/mcp.out")"

# Plain HTTP to the TLS port gets no HTTP answer; TLS 1.1 is refused.
if curl --silent --max-time 5 "http://127.0.0.1:$d_port/healthz" >"$E2E_DIR/plain.out" 2>&1; then
  fail "plain HTTP to the TLS port answered: $(cat "$E2E_DIR/plain.out")"
fi
if curl "${tls[@]}" --tlsv1.0 --tls-max 1.1 "$base/healthz" >"$E2E_DIR/tls11.out" 2>&1; then
  fail "a TLS 1.1 client was served"
fi
curl "${tls[@]}" --tlsv1.2 --tls-max 1.2 "$base/healthz" >/dev/null || fail "TLS 1.2 refused"

# Subject of the certificate a new connection is given.
served_subject() {
  openssl s_client -connect "127.0.0.1:$d_port" -servername localhost </dev/null 2>/dev/null |
    openssl x509 -noout -subject 2>/dev/null
}
[[ $(served_subject) == *first-cert* ]] || fail "served: $(served_subject)"

# A broken certificate on disk keeps the current one (and says so in the log).
echo "not a certificate" >"$E2E_DIR/serve.crt"
wait_for_output "$log" '(server.tls_reload_failed)' 20 >/dev/null || fail "no reload warning"
curl "${tls[@]}" "$base/healthz" >/dev/null || fail "the old certificate was dropped"

# The second certificate, written in place: new connections get it, no restart.
cp "$E2E_DIR/two.key" "$E2E_DIR/serve.key"
cp "$E2E_DIR/two.crt" "$E2E_DIR/serve.crt"
until_true 20 bash -c "openssl s_client -connect 127.0.0.1:$d_port -servername localhost \
  </dev/null 2>/dev/null | openssl x509 -noout -subject | grep -q second-cert" ||
  fail "the replaced certificate was not served: $(served_subject)"
curl --silent --show-error --max-time 10 --cacert "$E2E_DIR/two.crt" "$base/healthz" >/dev/null ||
  fail "GET /healthz with the second certificate"
[ -n "$(daemon_pid d)" ] && kill -0 "$(daemon_pid d)" || fail "the daemon restarted or died"
echo "PASS"

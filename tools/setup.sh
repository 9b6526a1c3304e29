#!/usr/bin/env bash
# Installs the Debian 12 packages agentstream builds and tests with. Safe to run again.
set -euo pipefail
PACKAGES=(
  g++ cmake ninja-build pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libsqlite3-dev sqlite3 libpq-dev postgresql-15 libssl-dev openssl
  libcli11-dev libfmt-dev libspdlog-dev libxxhash-dev libsodium-dev
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
  clang-14 libclang-rt-14-dev clang-format clang-tidy
  chromium haproxy curl debootstrap dpkg-dev
  systemd  # systemd-analyze verify and systemd-sysusers --dry-run check the units (cli_service)
  iproute2  # ip netns and veth: the silent database of silent_partition_postgres
  libqrencode-dev  # agentstream pair prints its URL as a QR code in the terminal
  caddy  # the reverse proxy with its own CA in front of the daemon (server_caddy_e2e)
  tzdata  # /usr/share/zoneinfo: the time zones of cron schedules (server/cron.h)
  libgoogle-perftools-dev  # tcmalloc, the programs' allocator (CMakeLists.txt)
)
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"

# Test peers: the real agent CLIs the integration tests drive offline (claude, gemini, opencode,
# codex, the Claude ACP adapters, codex-acp, qwen-code), pinned by the committed lock file
# (tests/peers/package-lock.json). Needs node >= 18 and npm; only the npm registry is contacted,
# and only when the lock file changed since the last install (a hash stamp in node_modules).
PEERS="$(cd "$(dirname "$0")/.." && pwd)/tests/peers"
want=$(sha256sum "$PEERS/package-lock.json" | awk '{print $1}')
have=$(cat "$PEERS/node_modules/.agentstream-lock.sha256" 2>/dev/null || true)
if [ "$have" != "$want" ] || [ ! -x "$PEERS/node_modules/.bin/claude" ]; then
  if ! command -v npm >/dev/null; then
    echo "setup: installing Debian's nodejs and npm"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
  fi
  echo "setup: npm ci in tests/peers (package-lock.json changed)"
  (cd "$PEERS" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$PEERS/node_modules/.agentstream-lock.sha256"
fi
echo "setup: test peers present ($(cd "$PEERS" && node -e \
  'const d=require("./package.json").dependencies;console.log(Object.entries(d).map(([k,v])=>k+"@"+v).join(" "))'))"

# The Durable Streams conformance suite, client and reference server (tools/test_conformance.sh,
# the benchmarks), pinned by tests/conformance/package-lock.json.
CONFORMANCE="$(cd "$(dirname "$0")/.." && pwd)/tests/conformance"
if ! (cd "$CONFORMANCE" && npm ls --depth=0 >/dev/null 2>&1); then
  echo "setup: npm ci in tests/conformance"
  (cd "$CONFORMANCE" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: conformance suite present"

# The checks of docs/openapi.yaml: Redocly's linter (tools/lint.sh) and the validator of the
# contract test (tests/openapi), pinned by tests/openapi/package-lock.json.
OPENAPI="$(cd "$(dirname "$0")/.." && pwd)/tests/openapi"
if ! (cd "$OPENAPI" && npm ls --depth=0 >/dev/null 2>&1); then
  echo "setup: npm ci in tests/openapi"
  (cd "$OPENAPI" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: OpenAPI tools present"

# The TypeScript client package (clients/typescript): TypeScript, openapi-typescript and ws,
# pinned by its package-lock.json.
CLIENT_TS="$(cd "$(dirname "$0")/.." && pwd)/clients/typescript"
if ! cmp -s "$CLIENT_TS/package-lock.json" "$CLIENT_TS/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: npm ci in clients/typescript"
  (cd "$CLIENT_TS" && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.installed-lock.json)
fi
echo "setup: client package dependencies present"

# The web page (web/): Vite, Vitest and Playwright pinned by web/package-lock.json; the browser
# tests drive Debian's chromium (installed above), never a downloaded browser.
WEB="$(cd "$(dirname "$0")/.." && pwd)/web"
if ! cmp -s "$WEB/package-lock.json" "$WEB/node_modules/.installed-lock.json" 2>/dev/null; then
  echo "setup: npm ci in web/"
  (cd "$WEB" && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.installed-lock.json)
fi
echo "setup: web dependencies present"

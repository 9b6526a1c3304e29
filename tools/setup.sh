#!/usr/bin/env bash
# Installs the Debian 12 packages agentstream builds and tests with. Safe to run again.
set -euo pipefail
PACKAGES=(
  g++ cmake ninja-build pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libsqlite3-dev sqlite3 libpq-dev postgresql-15
  libcli11-dev libfmt-dev libspdlog-dev libxxhash-dev libsodium-dev
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev
  clang-14 libclang-rt-14-dev clang-format clang-tidy
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

# Test peers: the real agent CLIs the integration tests drive offline, pinned by the committed
# lock file (tests/peers/package-lock.json). Needs node >= 18 and npm; only the npm registry is
# contacted, and only when the pinned version is not installed yet.
PEERS="$(cd "$(dirname "$0")/.." && pwd)/tests/peers"
want=$(sed -n 's/.*"@anthropic-ai\/claude-code": "\([^"]*\)".*/\1/p' "$PEERS/package.json")
have=$("$PEERS/node_modules/.bin/claude" --version 2>/dev/null | awk '{print $1}' || true)
if [ "$have" != "$want" ]; then
  if ! command -v npm >/dev/null; then
    echo "setup: installing Debian's nodejs and npm"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
  fi
  echo "setup: npm ci in tests/peers (claude-code $want)"
  (cd "$PEERS" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: test peers present (claude-code $want)"

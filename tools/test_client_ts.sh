#!/usr/bin/env bash
# The TypeScript client package's checks (clients/typescript): its generated OpenAPI types are
# current, it builds, and its tests pass against real daemons started from the given binary
# (kill -9 and restarts included), with its `npm pack` installed into a fresh project offline.
# Usage: tools/test_client_ts.sh path/to/agentstream. Needs tools/setup.sh (npm ci there).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 path/to/agentstream" >&2
  exit 2
fi
BIN=$(realpath "$1")
cd "$(dirname "$0")/../clients/typescript"
if [ ! -x node_modules/.bin/tsc ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
AGENTSTREAM_BINARY=$BIN npm test --silent

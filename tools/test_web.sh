#!/usr/bin/env bash
# The web page's checks: lints web/ (ESLint, Prettier), builds web/dist (tsc + Vite), runs the
# Vitest unit tests, then the Playwright end-to-end tests with Debian's Chromium against real
# daemons started from the given binary. Usage: tools/test_web.sh path/to/agentstream. Needs
# tools/setup.sh (chromium, npm ci).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 path/to/agentstream" >&2
  exit 2
fi
BIN=$(realpath "$1")
WEB="$(cd "$(dirname "$0")/../web" && pwd)"
export CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "test_web: $CHROMIUM not found (tools/setup.sh installs Debian's chromium)" >&2
  exit 1
fi
cd "$WEB"
# npm ci when the modules are missing or older than the lock file (a dependency was added).
if [ ! -x node_modules/.bin/vite ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "== web: lint (eslint, prettier --check)"
npm run lint --silent
echo "== web: build"
npm run build --silent
echo "== web: unit tests (vitest)"
npx vitest run
echo "== web: end-to-end (playwright, $("$CHROMIUM" --version 2>/dev/null | head -1))"
# A failed test's page as the browser had it (Playwright's error-context.md: the accessibility
# snapshot at the failure) is printed, so that a failure on another machine can be read from the
# log alone.
rm -rf test-results
if ! AGENTSTREAM_BIN="$BIN" npx playwright test; then
  find test-results -name error-context.md -print0 2>/dev/null | while IFS= read -r -d '' f; do
    echo "== $f"
    cat "$f"
  done
  exit 1
fi

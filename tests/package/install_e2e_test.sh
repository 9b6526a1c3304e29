#!/usr/bin/env bash
# `cmake --install` into a temporary prefix: the binary, the built page, the docs and the unit
# land in PREFIX/bin, PREFIX/share/agentstream/web, PREFIX/share/doc/agentstream and
# PREFIX/lib/systemd/system; the installed daemon, given no --web-root, serves the installed page;
# `--version` names the commit the tree is at.
#   install_e2e_test.sh AGENTSTREAM_BINARY BUILD_DIR
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
build=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
# The page is built by npm; web_test rebuilds it too, hence ctest's RESOURCE_LOCK web_dist.
if [ ! -f "$src/web/dist/index.html" ]; then
  (cd "$src/web" && npm run build --silent >/dev/null) || fail "cannot build the web page"
fi

prefix=$E2E_DIR/prefix
cmake --install "$build" --prefix "$prefix" >"$E2E_DIR/install.log" 2>&1 ||
  { cat "$E2E_DIR/install.log"; fail "cmake --install"; }
for f in bin/agentstream share/agentstream/web/index.html share/doc/agentstream/README.md \
    share/doc/agentstream/operations.md lib/systemd/system/agentstream.service \
    lib/systemd/user/agentstream.service lib/sysusers.d/agentstream.conf; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
assets=("$prefix"/share/agentstream/web/assets/*.js)
[ -f "${assets[0]}" ] || fail "no script of the page installed"

# The installed daemon finds the installed page (and not the source tree's: a marker tells).
echo "<!-- installed copy -->" >>"$prefix/share/agentstream/web/index.html"
E2E_BIN=$prefix/bin/agentstream
start_daemon d
curl -fsS "$d_url/" >"$E2E_DIR/page.html" || fail "GET / from the installed daemon"
grep -q "installed copy" "$E2E_DIR/page.html" || fail "the daemon did not serve the installed page"
curl -fsS "$d_url/assets/$(basename "${assets[0]}")" >/dev/null || fail "GET the page's script"

# --version: the project's version and the commit the source tree is at.
"$E2E_BIN" --version >"$E2E_DIR/version.txt" || fail "--version"
version=$(sed -n 's/^project(agentstream VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
grep -qx "agentstream $version" "$E2E_DIR/version.txt" || fail "--version: $(cat "$E2E_DIR/version.txt")"
grep -qx "stores memory sqlite postgresql" "$E2E_DIR/version.txt" || fail "--version names no stores"
if head=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
  grep -Eqx "commit $head(-dirty)?" "$E2E_DIR/version.txt" ||
    fail "--version names another commit than $head: $(cat "$E2E_DIR/version.txt")"
fi
echo "PASS"

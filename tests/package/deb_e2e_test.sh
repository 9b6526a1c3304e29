#!/usr/bin/env bash
# The Debian package: CPack builds the .deb from this build; debootstrap makes a clean Debian 12
# root (minbase); apt installs the package there, which pulls the dependencies the package names
# from Debian's archive; the daemon then starts in that root (chroot), serves its page and runs a
# scripted agent's turn. Needs root (chroot, mount), debootstrap and Debian's archive (the mirror
# in AGENTSTREAM_DEBIAN_MIRROR, default deb.debian.org); skipped otherwise. Downloaded packages are
# kept in ${XDG_CACHE_HOME:-~/.cache}/agentstream/debootstrap for the next run.
#   deb_e2e_test.sh AGENTSTREAM_BINARY BUILD_DIR
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
build=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || skip "needs root (chroot and mount)"
command -v debootstrap >/dev/null || skip "needs debootstrap (tools/setup.sh installs it)"
mirror=${AGENTSTREAM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
if [ ! -f "$src/web/dist/index.html" ]; then
  (cd "$src/web" && npm run build --silent >/dev/null) || fail "cannot build the web page"
fi

# The package.
(cd "$build" && cpack -G DEB -B "$E2E_DIR/pkg" >"$E2E_DIR/cpack.log" 2>&1) ||
  { cat "$E2E_DIR/cpack.log"; fail "cpack"; }
debs=("$E2E_DIR"/pkg/agentstream_*.deb)
deb=${debs[0]}
[ -f "$deb" ] || fail "cpack made no agentstream_*.deb"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libsqlite3-0 libpq5 libssl3 libsodium23 libtcmalloc-minimal4; do
  [[ $depends == *"$lib"* ]] || fail "the package does not depend on $lib: $depends"
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/agentstream ./usr/share/agentstream/web/index.html \
    ./usr/share/doc/agentstream/README.md ./usr/lib/systemd/system/agentstream.service \
    ./usr/lib/systemd/user/agentstream.service ./usr/lib/sysusers.d/agentstream.conf; do
  grep -q " $f\$" <<<"$contents" || fail "the package lacks $f"
done

# A clean Debian 12 root.
root=$E2E_DIR/root
cache=${XDG_CACHE_HOME:-$HOME/.cache}/agentstream/debootstrap
mkdir -p "$cache"
debootstrap --variant=minbase --cache-dir="$cache" bookworm "$root" "$mirror" \
  >"$E2E_DIR/debootstrap.log" 2>&1 || { tail -20 "$E2E_DIR/debootstrap.log"; fail "debootstrap"; }
mount -t proc proc "$root/proc"
at_cleanup umount -l "$root/proc"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$deb" "$root/tmp/"
in_root=(chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root)
"${in_root[@]}" apt-get install -y -q "/tmp/$(basename "$deb")" >"$E2E_DIR/apt.log" 2>&1 ||
  { tail -30 "$E2E_DIR/apt.log"; fail "apt-get install of the package in a clean root"; }
"${in_root[@]}" agentstream --version >"$E2E_DIR/version.txt" || fail "agentstream --version in the root"
grep -q "^agentstream " "$E2E_DIR/version.txt" || fail "--version: $(cat "$E2E_DIR/version.txt")"
# The postinst made the system unit's user (no systemd in a minbase root: useradd).
"${in_root[@]}" getent passwd agentstream | grep -q ":/var/lib/agentstream:" ||
  fail "the package's postinst did not create the agentstream user"

# The installed daemon in the clean root: its page from /usr/share/agentstream/web, a turn of the
# scripted agent, stored in the root's data directory.
"${in_root[@]}" agentstream --data /root/data serve --listen 127.0.0.1:0 >"$E2E_DIR/root-daemon.log" 2>&1 &
track_pid $!
show_on_failure "$E2E_DIR/root-daemon.log"
port=$(wait_for_output "$E2E_DIR/root-daemon.log" 'serving on http://127\.0\.0\.1:([0-9]+)') ||
  fail "the packaged daemon did not start"
url=http://127.0.0.1:$port
curl -fsS "$url/" | grep -q '<div id="app">' || fail "the packaged daemon serves no page"
client=(agentstream --url "$url")
agent=$("${in_root[@]}" "${client[@]}" agents new --provider scripted --cwd /root --title deb) ||
  fail "agents new"
"${in_root[@]}" "${client[@]}" send "$agent" "hello from the package" --wait >/dev/null || fail "send --wait"
[ -s "$root/root/data/agentstream.db" ] || fail "no SQLite store in the root's data directory"
echo "PASS"

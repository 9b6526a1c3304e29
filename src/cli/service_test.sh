#!/usr/bin/env bash
# `agentstream service` without a service manager: `install --no-enable` writes the unit that
# packaging/ ships, with this binary's ExecStart, data directory and listen address (quoted and
# escaped where systemd needs it) and no token; `status` names the file; `uninstall --no-disable`
# removes it; `install` without systemctl fails naming it and leaves the unit written. The units
# pass `systemd-analyze verify`, and the sysusers file `systemd-sysusers --dry-run` (both skipped
# without systemd's tools).
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
bin=$1
real_bin=$(readlink -f "$bin")
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=$E2E_DIR
export AGENTSTREAM_TOKEN=service-test-secret  # must not end up in a unit

# verify [--user] UNIT: systemd-analyze verify passes it without a word.
verify() {
  command -v systemd-analyze >/dev/null || { echo "no systemd-analyze: not verified: $*"; return; }
  mkdir -p -m 700 "$dir/runtime"
  XDG_RUNTIME_DIR=$dir/runtime systemd-analyze "${@:1:$#-1}" verify "${@: -1}" >"$dir/verify" 2>&1 ||
    fail "systemd-analyze verify $*: $(cat "$dir/verify")"
  [ ! -s "$dir/verify" ] || fail "systemd-analyze verify $*: $(cat "$dir/verify")"
}
# has UNIT LINE...: UNIT holds each LINE, whole.
has() {
  local unit=$1 line
  shift
  for line in "$@"; do grep -qxF -- "$line" "$unit" || fail "$unit has no line '$line': $(cat "$unit")"; done
}

# A user unit (the default).
"$bin" --data "$dir/data" service install --unit-dir "$dir/user" --no-enable \
  --listen 127.0.0.1:7777 >"$dir/out" 2>&1 || fail "install: $(cat "$dir/out")"
unit=$dir/user/agentstream.service
grep -qF "wrote $unit" "$dir/out" || fail "install says nothing of $unit: $(cat "$dir/out")"
has "$unit" "ExecStart=$real_bin --data $dir/data serve --listen 127.0.0.1:7777" Type=notify \
  Restart=on-failure KillMode=mixed TimeoutStopSec=45s WantedBy=default.target \
  "EnvironmentFile=-%E/agentstream/service.env"
! grep -q "^User=" "$unit" || fail "a user unit names a user"
! grep -q "$AGENTSTREAM_TOKEN" "$unit" || fail "the token is in the unit"
diff <(grep -v '^ExecStart=' "$src/packaging/agentstream-user.service") \
  <(tail -n +2 "$unit" | grep -v '^ExecStart=') >"$dir/diff" ||
  fail "the user unit written is not the one packaging/ ships: $(cat "$dir/diff")"
verify --user "$unit"

# TLS: the certificate and key, made absolute, on the ExecStart line; reload is SIGHUP.
"$bin" --data "$dir/data" service install --unit-dir "$dir/tls" --no-enable --tls-cert c.pem \
  --tls-key "$dir/k.pem" >"$dir/out" 2>&1 || fail "install --tls-cert: $(cat "$dir/out")"
has "$dir/tls/agentstream.service" "ExecReload=/bin/kill -HUP \$MAINPID" \
  "ExecStart=$real_bin --data $dir/data serve --listen 127.0.0.1:7600 --tls-cert $PWD/c.pem --tls-key $dir/k.pem"

# The base URL of pairing links on the ExecStart line; a malformed one writes nothing.
"$bin" --data "$dir/data" service install --unit-dir "$dir/public" --no-enable \
  --public-url https://box.example.ts.net >"$dir/out" 2>&1 || fail "install --public-url: $(cat "$dir/out")"
grep -qxF "ExecStart=$real_bin --data $dir/data serve --listen 127.0.0.1:7600 --public-url https://box.example.ts.net" \
  "$dir/public/agentstream.service" || fail "ExecStart without --public-url: $(cat "$dir/public/agentstream.service")"
if "$bin" --data "$dir/data" service install --unit-dir "$dir/public2" --no-enable \
  --public-url ftp://x >"$dir/out" 2>&1; then
  fail "install --public-url ftp://x succeeded"
fi
# Behind a reverse proxy: each --trusted-proxy on the ExecStart line; a malformed one writes
# nothing.
"$bin" --data "$dir/data" service install --unit-dir "$dir/proxy" --no-enable \
  --trusted-proxy 127.0.0.1 --trusted-proxy fd00::/8 >"$dir/out" 2>&1 ||
  fail "install --trusted-proxy: $(cat "$dir/out")"
has "$dir/proxy/agentstream.service" \
  "ExecStart=$real_bin --data $dir/data serve --listen 127.0.0.1:7600 --trusted-proxy 127.0.0.1 --trusted-proxy fd00::/8"
if "$bin" --data "$dir/data" service install --unit-dir "$dir/bad-proxy" --no-enable \
  --trusted-proxy 10.0.0.1/8 >"$dir/out" 2>&1; then
  fail "install --trusted-proxy 10.0.0.1/8 succeeded"
fi
grep -q 'trusted-proxy: bad address range "10.0.0.1/8"' "$dir/out" || fail "$(cat "$dir/out")"
[ ! -e "$dir/bad-proxy/agentstream.service" ] || fail "a unit with a malformed proxy was written"

# A system unit: the data in its StateDirectory; the shipped unit but for the binary.
"$bin" service install --system --unit-dir "$dir/system" --no-enable >"$dir/out" 2>&1 ||
  fail "install --system: $(cat "$dir/out")"
unit=$dir/system/agentstream.service
has "$unit" "ExecStart=$real_bin --data /var/lib/agentstream serve --listen 127.0.0.1:7600" \
  User=agentstream StateDirectory=agentstream KillMode=mixed WantedBy=multi-user.target
diff <(sed "s|^ExecStart=/usr/bin/agentstream |ExecStart=$real_bin |" \
  "$src/packaging/agentstream.service") <(tail -n +2 "$unit") >"$dir/diff" ||
  fail "the system unit written is not the one packaging/ ships: $(cat "$dir/diff")"
verify "$unit"

# Spaces, '%' and '$' in the paths: quoted and escaped; verify finds the binary through them.
odd="$dir/b in%d\$ir"
mkdir -p "$odd"
ln "$real_bin" "$odd/agentstream" 2>/dev/null || cp "$real_bin" "$odd/agentstream"
"$odd/agentstream" --data "$dir/da ta%\$x" service install --system --unit-dir "$dir/odd" \
  --no-enable >"$dir/out" 2>&1 || fail "install from $odd: $(cat "$dir/out")"
has "$dir/odd/agentstream.service" \
  "ExecStart=\"$dir/b in%%d\$ir/agentstream\" --data \"$dir/da ta%%\$\$x\" serve --listen 127.0.0.1:7600"
verify "$dir/odd/agentstream.service"

if command -v systemd-sysusers >/dev/null; then
  mkdir -p "$dir/root/etc"
  systemd-sysusers --root="$dir/root" --dry-run "$src/packaging/agentstream.sysusers" \
    >"$dir/out" 2>&1 || fail "systemd-sysusers: $(cat "$dir/out")"
  grep -q "Creating user 'agentstream'" "$dir/out" || fail "sysusers: $(cat "$dir/out")"
fi

# status names the unit file, and asks systemctl (which may fail here: no service manager).
"$bin" service status --unit-dir "$dir/user" >"$dir/out" 2>&1 || true
grep -qxF "unit file: $dir/user/agentstream.service (present)" "$dir/out" ||
  fail "status: $(cat "$dir/out")"
grep -qF "running systemctl --user status --no-pager agentstream.service" "$dir/out" ||
  fail "status ran no systemctl: $(cat "$dir/out")"

# uninstall removes the file; a second one finds none.
"$bin" service uninstall --unit-dir "$dir/user" --no-disable >"$dir/out" 2>&1 ||
  fail "uninstall: $(cat "$dir/out")"
[ ! -e "$dir/user/agentstream.service" ] || fail "uninstall left the unit"
rc=0
"$bin" service uninstall --unit-dir "$dir/user" --no-disable >"$dir/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -qF "no unit at $dir/user/agentstream.service" "$dir/out" ||
  fail "a second uninstall (exit $rc): $(cat "$dir/out")"

# Without systemctl, install says so and keeps the unit it wrote.
rc=0
PATH=/nonexistent "$bin" --data "$dir/data" service install --unit-dir "$dir/nosystemctl" \
  >"$dir/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -qF "cannot run systemctl" "$dir/out" ||
  fail "install without systemctl (exit $rc): $(cat "$dir/out")"
[ -f "$dir/nosystemctl/agentstream.service" ] || fail "the unit was not kept"

# --user and --system exclude each other (usage: 2).
rc=0
"$bin" service status --user --system >"$dir/out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--user --system (exit $rc): $(cat "$dir/out")"
echo "cli service: passed"

#!/usr/bin/env bash
# No agent process outlives the daemon: the real `claude` CLI (tests/peers), offline against the
# scripted model server, runs a background task (`sleep 300`, run_in_background, which claude
# starts in a session of its own) and a process that leaves its session (`setsid sleep 301`); the
# daemon is killed with SIGKILL. Within 5 s the CLI and both processes are gone (the supervisor
# kills everything the agent started). Then the same with the supervisor killed too (as the OOM
# killer might): what survives carries the daemon's marker and dies when the daemon starts again
# on its data directory.
#   orphans_e2e_test.sh AGENTSTREAM_BINARY
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
claude="$root/tests/peers/node_modules/.bin/claude"
[ -x "$claude" ] || skip "the claude CLI is not installed (tools/setup.sh)"

# The model server runs while its stdin is open: a fifo this shell holds.
mkfifo "$E2E_DIR/model.stdin"
exec 7<>"$E2E_DIR/model.stdin"
node "$root/tests/model_server/server.mjs" >"$E2E_DIR/model.log" 2>&1 <"$E2E_DIR/model.stdin" &
track_pid $!
show_on_failure "$E2E_DIR/model.log"
model_port=$(wait_for_output "$E2E_DIR/model.log" '^listening ([0-9]+)$' 30) ||
  fail "the model server did not start"
mkdir -p "$E2E_DIR/home" "$E2E_DIR/work"
export HOME="$E2E_DIR/home" ANTHROPIC_BASE_URL="http://127.0.0.1:$model_port"
export ANTHROPIC_API_KEY=sk-ant-offline-test IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1

# The processes of this test's daemon (its marker names the daemon id), by command line.
marked() {  # marked PATTERN: pids whose environment carries the daemon's marker
  local id pid
  id=$(cat "$(daemon_data d)/daemon.id")
  for pid in $(pgrep -f "$1" || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -q "^AGENTSTREAM_DAEMON=$id/" &&
      echo "$pid"
  done
}
running() { [ -n "$(marked "$1")" ]; }
gone() { [ -z "$(marked "$1")" ]; }

start_daemon d --claude-program "$claude"
client=(--url "$d_url")
agent=$("$E2E_BIN" "${client[@]}" agents new --provider claude --cwd "$E2E_DIR/work" \
  --mode bypassPermissions) || fail "agents new"
"$E2E_BIN" "${client[@]}" send "$agent" "[bg-sleep 300]" --wait >"$E2E_DIR/send1.out" 2>&1 || fail "background task: $(cat "$E2E_DIR/send1.out")"
until_true 30 running "sleep 300" || fail "no background sleep 300"
"$E2E_BIN" "${client[@]}" send "$agent" "[shell setsid sleep 301 >/dev/null 2>&1 </dev/null &]" \
  --wait >/dev/null || fail "detached process"
until_true 30 running "sleep 301" || fail "no detached sleep 301"

kill_daemon d KILL
until_true 5 gone "sleep 300" || fail "the background task outlived the daemon: $(marked 'sleep 300')"
until_true 5 gone "sleep 301" || fail "the detached process outlived the daemon: $(marked 'sleep 301')"
until_true 5 gone "node_modules/.bin/claude|claude-code" ||
  fail "the claude CLI outlived the daemon: $(marked 'claude')"

# Again, the supervisor killed before the daemon: nothing is left to clean up in the daemon's
# absence, so the next start must.
start_daemon d --claude-program "$claude"
client=(--url "$d_url")
"$E2E_BIN" "${client[@]}" send "$agent" "[bg-sleep 302]" --wait >/dev/null ||
  fail "background task after the restart"
until_true 30 running "sleep 302" || fail "no background sleep 302"
for pid in $(pgrep -P "$(daemon_pid d)"); do kill -9 "$pid"; done  # the supervisors
kill_daemon d KILL
sleep 1
running "sleep 302" || fail "nothing survived the supervisor's death (nothing to prove at restart)"
start_daemon d --claude-program "$claude"
until_true 5 gone "sleep 302" || fail "the restarted daemon did not stop what its earlier run left"
grep -q "daemon.leftovers_killed" "$E2E_DIR/d.log" ||
  fail "the restarted daemon did not report the leftovers it stopped"
# The session goes on: the next prompt resumes the conversation.
"$E2E_BIN" --url "$d_url" send "$agent" "hello again" --wait >/dev/null ||
  fail "the agent does not answer after the restart"
echo "orphans e2e: claude, its background task and a detached process died with the daemon;" \
  "leftovers of a killed supervisor died with the next start"

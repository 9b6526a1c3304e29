#!/usr/bin/env bash
# The daemon's log (docs/operations.md, "Logs"), with --log-format json: an ACP agent whose
# process kills itself with SIGKILL mid-turn shows as a process.exited line naming the agent, the
# signal and the process's stderr tail, then a turn.failed line; the daemon's start and stop are
# logged; every log line is one JSON object; and neither the token nor the prompt's text appears
# (info level). An ACP agent that closes its stdin at once fails its start, logged as
# process.exited and agent.error, and the daemon lives on: a write to a closed pipe is an error
# (EPIPE), not a SIGPIPE that would end the daemon.
#   logs_e2e_test.sh AGENTSTREAM_BINARY
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
here=$(cd "$(dirname "$0")" && pwd)
log="$E2E_DIR/d.log"
token="tok-$RANDOM$RANDOM-secret"
prompt="PROMPT-TEXT-$RANDOM$RANDOM never logged"
mkdir -p "$E2E_DIR/work"

start_daemon d --log-format json --token "$token" \
  --acp-agent "crasher=$here/crashing_acp_agent.sh" --acp-agent "deaf=$here/deaf_acp_agent.sh"
client=(--url "$d_url" --token "$token")
agent=$("$E2E_BIN" "${client[@]}" agents new --provider acp:crasher --cwd "$E2E_DIR/work") ||
  fail "agents new"
"$E2E_BIN" "${client[@]}" send "$agent" "$prompt" --wait >"$E2E_DIR/send.out" 2>&1 &&
  fail "the turn of a killed agent must not succeed: $(cat "$E2E_DIR/send.out")"

exited=$(wait_for_output "$log" '^(\{"ts":.*"event":"process.exited".*)$' 30) ||
  fail "no process.exited line"
for want in "\"level\":\"warn\"" "\"agent\":\"$agent\"" '"provider":"acp:crasher"' \
  "\"program\":\"$here/crashing_acp_agent.sh\"" '"signal":"SIGKILL"' \
  '"stderr_tail":"crashing_acp_agent: out of cheese, stopping"'; do
  [[ $exited == *"$want"* ]] || fail "process.exited lacks $want: $exited"
done
started=$(wait_for_output "$log" '^(\{.*"event":"process.started".*)$' 1) ||
  fail "no process.started line"
[[ $started == *"\"agent\":\"$agent\""*'"pid":'* ]] || fail "process.started: $started"
failed=$(wait_for_output "$log" '^(\{.*"event":"turn.failed".*)$' 30) || fail "no turn.failed line"
[[ $failed == *"\"agent\":\"$agent\""*'"code":"provider_exited"'* ]] || fail "turn.failed: $failed"
wait_for_output "$log" '^(\{.*"event":"agent.created".*"provider":"acp:crasher".*)$' 1 >/dev/null ||
  fail "no agent.created line"
wait_for_output "$log" '^(\{.*"event":"daemon.started".*"store":"sqlite".*)$' 1 >/dev/null ||
  fail "no daemon.started line"

deaf=$("$E2E_BIN" "${client[@]}" agents new --provider acp:deaf --cwd "$E2E_DIR/work" 2>&1) &&
  fail "the start of an agent that closed its stdin must fail: $deaf"
[[ $deaf == *"initialize failed"* ]] || fail "agents new acp:deaf: $deaf"
wait_for_output "$log" '^(\{.*"event":"process.exited".*"provider":"acp:deaf".*)$' 30 >/dev/null ||
  fail "no process.exited line of acp:deaf"
wait_for_output "$log" '^(\{.*"event":"agent.error".*"provider":"acp:deaf".*)$' 30 >/dev/null ||
  fail "no agent.error line of acp:deaf"
kill -0 "$(daemon_pid d)" 2>/dev/null || fail "the daemon died writing to an agent's closed stdin"
curl -fsS -H "authorization: Bearer $token" "$d_url/healthz" >/dev/null ||
  fail "the daemon does not answer after acp:deaf"

kill_daemon d TERM
wait_for_output "$log" '^(\{.*"event":"daemon.stopping".*"signal":"SIGTERM".*)$' 1 >/dev/null ||
  fail "no daemon.stopping line"
wait_for_output "$log" '^(\{.*"event":"daemon.stopped".*"exit_code":0.*)$' 1 >/dev/null ||
  fail "no daemon.stopped line"

grep -qF -- "$token" "$log" && fail "the token is in the log"
grep -qF -- "PROMPT-TEXT" "$log" && fail "the prompt's text is in the log"
# Every line but the "serving on" one is a JSON object with its time, level and event.
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean);
  for (const line of lines) {
    if (line.startsWith("agentstream: serving on ")) continue;
    const o = JSON.parse(line);
    if (!o.ts || !o.level || !o.event) throw new Error("not a log line: " + line);
  }' "$log" || fail "a line of the log is not a JSON log line"
echo "logs e2e: process.exited with SIGKILL and its stderr tail, turn.failed, start and stop;" \
  "no token, no prompt text; an agent that closed its stdin fails its start, the daemon lives on"

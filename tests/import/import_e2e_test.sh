#!/usr/bin/env bash
# Importing the transcripts of the real `claude` and `codex` CLIs (tests/peers), recorded offline
# against the scripted model server by running the CLIs directly, not through the daemon
# (docs/import.md; `agentstream import`, GET and POST /v1/imports):
#   - claude: two turns (the first with a Bash tool call), resumed with `--resume`; codex: two
#     turns (`codex exec`, then `codex exec resume`, the first with an exec_command call). Each
#     imports as a new agent (outcome created) whose snapshot says "imported", whose log holds
#     the turns (user.message, assistant.message.*, tool_call.*, turn.completed) and a
#     session.imported event, read page by page, found by search; `agentstream check` passes.
#   - Imported again: unchanged, no event added. The claude transcript grown by one more direct
#     CLI run: appended, only the new turn added.
#   - A prompt through the daemon resumes the CLI's own session: the model request carries the
#     imported past ([recall] lists the earlier prompts). Imported again: continued, nothing of
#     the transcript re-imported.
#   - Refusals: a path outside the root, not absolute, not *.jsonl, a missing file, an unknown
#     source or member, a transcript without a session id, one over 1 GiB; a transcript with a
#     malformed line and an unknown record type imports with both counted.
# Every answer of the daemon passes the contract proxy (docs/openapi.yaml).
#   import_e2e_test.sh AGENTSTREAM_BINARY
# (no pipefail: `X | grep -q` would fail whenever grep's early exit leaves X a SIGPIPE)
set -eu
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
trap 'fail "a command failed at line $LINENO"' ERR
E2E_BIN=$1
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
claude="$root/tests/peers/node_modules/.bin/claude"
codex="$root/tests/peers/node_modules/.bin/codex"
[ -x "$claude" ] || skip "the claude CLI is not installed (tools/setup.sh)"
[ -x "$codex" ] || skip "the codex CLI is not installed (tools/setup.sh)"
unset AGENTSTREAM_TOKEN CLAUDE_CONFIG_DIR

# ---- Helpers -------------------------------------------------------------------------------
cat >"$E2E_DIR/json.mjs" <<'EOF'
// node json.mjs get EXPR     < JSON   prints EXPR of the JSON `j` (strings raw, the rest as JSON)
// node json.mjs lines        < ARRAY  prints each element as one JSON line
// node json.mjs types FILE            the top-level "type" of each line of a JSONL file, counted
//                                     ("(malformed)" for a line that is not a JSON object)
// node json.mjs timeline URL ID N     pages the agent's timeline N items at a time from the tail
//                                     back (direction=before&cursor=startCursor), prints the
//                                     items oldest first, one JSON line each; exits 1 on a page
//                                     over N items or one that does not go back
import fs from 'node:fs';
const [cmd, ...args] = process.argv.slice(2);
const input = () => JSON.parse(fs.readFileSync(0, 'utf8'));
const print = (r) => console.log(typeof r === 'string' ? r : JSON.stringify(r));
if (cmd === 'get') {
  const j = input();
  print(eval(args[0]));
} else if (cmd === 'lines') {
  for (const e of input()) console.log(JSON.stringify(e));
} else if (cmd === 'types') {
  const counts = {};
  for (const line of fs.readFileSync(args[0], 'utf8').split('\n')) {
    if (line === '') continue;
    let type = '(malformed)';
    try {
      const o = JSON.parse(line);
      if (o && typeof o === 'object' && !Array.isArray(o)) type = String(o.type);
    } catch {}
    counts[type] = (counts[type] || 0) + 1;
  }
  print(counts);
} else if (cmd === 'timeline') {
  const [url, id, n] = [args[0], args[1], Number(args[2])];
  let query = `direction=tail&limit=${n}`;
  let pages = [];
  let previous = null;
  for (;;) {
    const res = await fetch(`${url}/v1/agents/${id}/timeline?${query}`);
    if (res.status !== 200) { console.error(`timeline ${query}: ${res.status}`); process.exit(1); }
    const page = await res.json();
    if (page.items.length > n) { console.error(`a page of ${page.items.length} items`); process.exit(1); }
    if (page.items.length === 0 || page.startCursor === previous) {
      console.error(`the page before ${previous} does not go back: ${JSON.stringify(page)}`);
      process.exit(1);
    }
    pages.unshift(page.items);
    if (!page.hasOlder) break;
    previous = page.startCursor;
    query = `direction=before&cursor=${page.startCursor}&limit=${n}`;
  }
  for (const items of pages) for (const item of items) print(item);
} else {
  console.error(`json.mjs: unknown command ${cmd}`);
  process.exit(2);
}
EOF
jget() { node "$E2E_DIR/json.mjs" get "$1"; }  # jget EXPR < JSON

# all_events ID [OFFSET]: the events of agent ID after OFFSET (default: all), one JSON envelope
# a line, read a batch at a time (Stream-Next-Offset) until Stream-Up-To-Date.
all_events() {
  local offset=${2:--1} next body
  while :; do
    body=$(curl -sf -D "$E2E_DIR/events.headers" "$url/v1/agents/$1/events?offset=$offset") ||
      { echo "events of $1 after $offset: curl failed" >&2; return 1; }
    node "$E2E_DIR/json.mjs" lines <<<"$body"
    grep -qi '^stream-up-to-date: *true' "$E2E_DIR/events.headers" && return 0
    next=$(tr -d '\r' <"$E2E_DIR/events.headers" | sed -n 's/^[Ss]tream-[Nn]ext-[Oo]ffset: *//p')
    [ -n "$next" ] && [ "$next" != "$offset" ] || { echo "events of $1: stuck at $offset" >&2; return 1; }
    offset=$next
  done
}
kinds() { grep -c "\"kind\":\"$1\"" "$2" || true; }  # kinds KIND FILE: events of KIND in FILE
# texts KIND FILE: the payload texts of the events of KIND in FILE, one a line
texts() {
  grep "\"kind\":\"$1\"" "$2" | while IFS= read -r e; do jget 'j.payload.text' <<<"$e"; done
}
# import_line OUT PATH: "AGENT OUTCOME EVENTS" of PATH's line "<agent> <outcome> <n> events <path>"
import_line() { awk -v p="$2" '$4 == "events" && $5 == p { print $1, $2, $3 }' "$1"; }
post_import() {  # post_import BODY: prints the answer's body, then its status on a line of its own
  curl -s -w '\n%{http_code}' -H 'Content-Type: application/json' --max-time 60 -d "$1" \
    "$url/v1/imports"
}
status_of() { tail -n 1 <<<"$1"; }
body_of() { sed '$d' <<<"$1"; }
search_finds() {  # search_finds WORD AGENT: a hit of AGENT for WORD
  curl -s "$url/v1/search?q=$1" | grep -q "\"agent\":\"$2\""
}

# ---- The CLIs, offline ---------------------------------------------------------------------
# The model server runs while its stdin is open: a fifo this shell holds.
mkfifo "$E2E_DIR/model.stdin"
exec 7<>"$E2E_DIR/model.stdin"
node "$root/tests/model_server/server.mjs" >"$E2E_DIR/model.log" 2>&1 <"$E2E_DIR/model.stdin" &
track_pid $!
model_port=$(wait_for_output "$E2E_DIR/model.log" '^listening ([0-9]+)$' 30) ||
  fail "the model server did not start"

mkdir -p "$E2E_DIR/home" "$E2E_DIR/codex" "$E2E_DIR/claude-work" "$E2E_DIR/codex-work"
cwork=$(cd "$E2E_DIR/claude-work" && pwd -P)
xwork=$(cd "$E2E_DIR/codex-work" && pwd -P)
export HOME="$E2E_DIR/home" CODEX_HOME="$E2E_DIR/codex"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$model_port" ANTHROPIC_API_KEY=sk-ant-offline-test
export IS_SANDBOX=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 FAKE_API_KEY=offline-test
cat >"$CODEX_HOME/config.toml" <<EOF
model = "fake-model"
model_provider = "fake"
[model_providers.fake]
name = "Scripted"
base_url = "http://127.0.0.1:$model_port/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
EOF

# claude_run OUT PROMPT [ARG...]: one headless claude run in the claude work directory.
claude_run() {
  local out="$E2E_DIR/$1" prompt=$2
  shift 2
  (cd "$cwork" && "$claude" -p "$prompt" --output-format stream-json --verbose \
    --permission-mode bypassPermissions "$@" </dev/null >"$out" 2>&1) ||
    fail "claude -p '$prompt' $*: $(tail -n 5 "$out")"
  grep -q '"type":"result","subtype":"success"' "$out" || fail "claude -p '$prompt': no success"
}
# codex_run OUT [ARG...] PROMPT: one `codex exec` run in the codex work directory.
codex_run() {
  local out="$E2E_DIR/$1"
  shift
  (cd "$xwork" && "$codex" exec --json --skip-git-repo-check \
    --dangerously-bypass-approvals-and-sandbox --disable plugins --disable apps \
    -c analytics.enabled=false "$@" </dev/null >"$out" 2>"$out.err") ||
    fail "codex exec $*: $(tail -n 5 "$out" "$out.err")"
  grep -q '"type":"turn.completed"' "$out" || fail "codex exec $*: the turn did not complete"
}

p1="first prompt zebrafinch [shell echo tool-ran]"
p2="second prompt [say second answer]"
p3="third prompt hummingbirdz [say third answer]"
x1="codex prompt quetzalbird [shell echo codex-tool-ran]"
x2="second codex prompt [say codex second]"

claude_run claude1.out "$p1"
sid=$(grep -o -m 1 '"session_id":"[^"]*"' "$E2E_DIR/claude1.out" | cut -d '"' -f 4)
[ -n "$sid" ] || fail "no claude session id"
grep -q '"name":"Bash"' "$E2E_DIR/claude1.out" || fail "claude ran no Bash tool"
claude_run claude2.out "$p2" --resume "$sid"
grep -q "\"session_id\":\"$sid\"" "$E2E_DIR/claude2.out" || fail "claude --resume changed the session"
claude_root="$HOME/.claude/projects"
ctranscript="$claude_root/$(sed 's/[^A-Za-z0-9]/-/g' <<<"$cwork")/$sid.jsonl"
[ -f "$ctranscript" ] || fail "no claude transcript at $ctranscript: $(find "$HOME/.claude" -name '*.jsonl')"
ctypes=$(node "$E2E_DIR/json.mjs" types "$ctranscript")
echo "claude transcript record types: $ctypes"
for type in user assistant queue-operation; do
  [ "$(jget "j['$type'] || 0" <<<"$ctypes")" -gt 0 ] || fail "the claude transcript has no $type"
done

codex_run codex1.out "$x1"
tid=$(grep -o -m 1 '"thread_id":"[^"]*"' "$E2E_DIR/codex1.out" | cut -d '"' -f 4)
[ -n "$tid" ] || fail "no codex thread id"
grep -q '"type":"command_execution"' "$E2E_DIR/codex1.out" || fail "codex ran no command"
codex_run codex2.out resume "$tid" "$x2"
xtranscript=$(find "$CODEX_HOME/sessions" -name "rollout-*-$tid.jsonl")
[ -n "$xtranscript" ] && [ "$(wc -l <<<"$xtranscript")" -eq 1 ] ||
  fail "not one codex rollout of $tid: $(find "$CODEX_HOME" -name '*.jsonl')"
xtypes=$(node "$E2E_DIR/json.mjs" types "$xtranscript")
echo "codex rollout record types: $xtypes"
for type in session_meta response_item event_msg; do
  [ "$(jget "j['$type'] || 0" <<<"$xtypes")" -gt 0 ] || fail "the codex rollout has no $type"
done

# ---- The daemon, with the CLIs' environment ------------------------------------------------
# (an unknown subcommand's --help is the main help)
"$bin" import --help 2>&1 | grep -qE '^Usage: [^ ]+ import( |$)' || fail "this agentstream has no import command"
start_daemon d --claude-program "$claude" --codex-program "$codex"
contract_proxy p d
url=$p_url
export AGENTSTREAM_URL=$url
store="sqlite:$(daemon_data d)/agentstream.db"

# ---- claude: created -----------------------------------------------------------------------
"$bin" import claude --project "$cwork" >"$E2E_DIR/import1.out" 2>"$E2E_DIR/import1.err" ||
  fail "import claude: $(cat "$E2E_DIR/import1.out" "$E2E_DIR/import1.err")"
show_on_failure "$E2E_DIR/import1.out" "$E2E_DIR/import1.err"
[ "$(grep -c ' events ' "$E2E_DIR/import1.out")" -eq 1 ] ||
  fail "import claude: not one file line: $(cat "$E2E_DIR/import1.out")"
read -r cid outcome n < <(import_line "$E2E_DIR/import1.out" "$ctranscript") ||
  fail "import claude: no line for $ctranscript: $(cat "$E2E_DIR/import1.out")"
[[ $cid == ses_* ]] && [ "$outcome" = created ] && [ "$n" -gt 0 ] ||
  fail "import claude: $(cat "$E2E_DIR/import1.out")"
grep -qx "imported: 1 created, 0 appended, 0 unchanged, 0 continued, 0 malformed lines skipped" \
  "$E2E_DIR/import1.out" || fail "import claude: the summary: $(cat "$E2E_DIR/import1.out")"
! grep -q importing "$E2E_DIR/import1.err" || fail "progress lines while stderr is no terminal"

show=$("$bin" agents show "$cid" --json) || fail "agents show $cid"
for member in '"imported":"claude"' '"provider":"claude"' "\"cwd\":\"$cwork\"" '"status":"idle"' \
  "\"title\":\"$p1\""; do
  grep -qF "$member" <<<"$show" || fail "claude agent: no $member: $show"
done

all_events "$cid" >"$E2E_DIR/claude.ev1" || fail "events of $cid"
show_on_failure "$E2E_DIR/claude.ev1"
[ "$(wc -l <"$E2E_DIR/claude.ev1")" -eq "$n" ] ||
  fail "claude: $n events reported, $(wc -l <"$E2E_DIR/claude.ev1") in the log"
[ "$(kinds user.message "$E2E_DIR/claude.ev1")" -eq 2 ] || fail "claude: not 2 user messages"
[ "$(texts user.message "$E2E_DIR/claude.ev1")" = "$(printf '%s\n%s' "$p1" "$p2")" ] ||
  fail "claude: the user messages: $(texts user.message "$E2E_DIR/claude.ev1")"
[ "$(kinds turn.completed "$E2E_DIR/claude.ev1")" -eq 2 ] || fail "claude: not 2 turns completed"
[ "$(kinds tool_call.start "$E2E_DIR/claude.ev1")" -eq 1 ] || fail "claude: not 1 tool call"
grep '"kind":"tool_call.start"' "$E2E_DIR/claude.ev1" | grep -q 'echo tool-ran' ||
  fail "claude: the tool call's input"
grep '"kind":"tool_call.end"' "$E2E_DIR/claude.ev1" | grep -q '"output":"tool-ran' ||
  fail "claude: the tool call's output"
[ "$(kinds assistant.message.start "$E2E_DIR/claude.ev1")" -ge 3 ] || fail "claude: assistant messages"
answers=$(texts assistant.message.delta "$E2E_DIR/claude.ev1" | tr -d '\n')
for text in "Running it." "Tool finished: tool-ran" "second answer"; do
  grep -qF "$text" <<<"$answers" || fail "claude: no answer '$text': $answers"
done
[ "$(kinds session.imported "$E2E_DIR/claude.ev1")" -eq 1 ] || fail "claude: not 1 session.imported"
imported=$(grep '"kind":"session.imported"' "$E2E_DIR/claude.ev1")
[ "$(tail -n 1 "$E2E_DIR/claude.ev1")" = "$imported" ] || fail "claude: session.imported is not last"
cbytes=$(stat -c %s "$ctranscript")
clines=$(wc -l <"$ctranscript")
[ "$(jget '[j.payload.source, j.payload.path, j.payload.sessionId, j.payload.offset,
  j.payload.lines, j.payload.malformed].join(" ")' <<<"$imported")" = \
  "claude $ctranscript $sid $cbytes $clines 0" ] || fail "claude: session.imported: $imported"
for type in queue-operation last-prompt; do
  [ "$(jget "j.payload.skipped['$type'] || 0" <<<"$imported")" = \
    "$(jget "j['$type'] || 0" <<<"$ctypes")" ] || fail "claude: $type skipped: $imported"
done

# Paging: after an offset (both spellings) the rest; the timeline two items at a time.
all_events "$cid" 1:3 >"$E2E_DIR/claude.after3" || fail "events after 1:3"
[ "$(tail -n +4 "$E2E_DIR/claude.ev1")" = "$(cat "$E2E_DIR/claude.after3")" ] ||
  fail "claude: the events after 1:3 are not the log's rest"
all_events "$cid" 0000000000000001_0000000000000005 >"$E2E_DIR/claude.after5" || fail "events after 5"
[ "$(tail -n +6 "$E2E_DIR/claude.ev1")" = "$(cat "$E2E_DIR/claude.after5")" ] ||
  fail "claude: the events after offset 5 are not the log's rest"
node "$E2E_DIR/json.mjs" timeline "$url" "$cid" 2 >"$E2E_DIR/claude.timeline" ||
  fail "claude: paging the timeline"
show_on_failure "$E2E_DIR/claude.timeline"
[ "$(grep -c '"kind":"user_message"' "$E2E_DIR/claude.timeline")" -eq 2 ] &&
  grep -q '"kind":"tool_call"' "$E2E_DIR/claude.timeline" &&
  [ "$(grep -c '"kind":"assistant_message"' "$E2E_DIR/claude.timeline")" -ge 3 ] ||
  fail "claude: the timeline's items"
grep -m 1 '"kind":"user_message"' "$E2E_DIR/claude.timeline" | grep -qF "\"text\":\"$p1\"" ||
  fail "claude: the timeline's first prompt"

until_true 20 search_finds zebrafinch "$cid" ||
  fail "search zebrafinch: $(curl -s "$url/v1/search?q=zebrafinch")"

# Nothing modified after tomorrow: nothing to import.
tomorrow=$(($(date +%s) * 1000 + 86400000))
out=$("$bin" import claude --project "$cwork" --since "$tomorrow") || fail "import --since: $out"
[ "$out" = "imported: 0 created, 0 appended, 0 unchanged, 0 continued, 0 malformed lines skipped" ] ||
  fail "import --since tomorrow: $out"

# ---- codex: created ------------------------------------------------------------------------
"$bin" import codex --project "$xwork" >"$E2E_DIR/import2.out" 2>&1 ||
  fail "import codex: $(cat "$E2E_DIR/import2.out")"
read -r xid outcome xn < <(import_line "$E2E_DIR/import2.out" "$xtranscript") ||
  fail "import codex: no line for $xtranscript: $(cat "$E2E_DIR/import2.out")"
[[ $xid == ses_* ]] && [ "$xid" != "$cid" ] && [ "$outcome" = created ] && [ "$xn" -gt 0 ] ||
  fail "import codex: $(cat "$E2E_DIR/import2.out")"
grep -qx "imported: 1 created, 0 appended, 0 unchanged, 0 continued, 0 malformed lines skipped" \
  "$E2E_DIR/import2.out" || fail "import codex: the summary: $(cat "$E2E_DIR/import2.out")"
show=$("$bin" agents show "$xid" --json) || fail "agents show $xid"
for member in '"imported":"codex"' '"provider":"codex"' "\"cwd\":\"$xwork\"" "\"title\":\"$x1\""; do
  grep -qF "$member" <<<"$show" || fail "codex agent: no $member: $show"
done
all_events "$xid" >"$E2E_DIR/codex.ev1" || fail "events of $xid"
show_on_failure "$E2E_DIR/codex.ev1"
[ "$(wc -l <"$E2E_DIR/codex.ev1")" -eq "$xn" ] || fail "codex: $xn events reported"
# The prompts only: not codex's own context messages (developer, <environment_context>).
[ "$(texts user.message "$E2E_DIR/codex.ev1")" = "$(printf '%s\n%s' "$x1" "$x2")" ] ||
  fail "codex: the user messages: $(texts user.message "$E2E_DIR/codex.ev1")"
[ "$(kinds turn.completed "$E2E_DIR/codex.ev1")" -eq 2 ] || fail "codex: not 2 turns completed"
[ "$(kinds tool_call.start "$E2E_DIR/codex.ev1")" -eq 1 ] || fail "codex: not 1 tool call"
grep '"kind":"tool_call.start"' "$E2E_DIR/codex.ev1" | grep -q 'echo codex-tool-ran' ||
  fail "codex: the tool call's input"
grep '"kind":"tool_call.end"' "$E2E_DIR/codex.ev1" | grep -q 'codex-tool-ran' ||
  fail "codex: the tool call's output"
answers=$(texts assistant.message.delta "$E2E_DIR/codex.ev1" | tr -d '\n')
for text in "Running it." "Tool finished: codex-tool-ran" "codex second"; do
  grep -qF "$text" <<<"$answers" || fail "codex: no answer '$text': $answers"
done
# Each answer once (the rollout holds a message both as response_item and event_msg).
[ "$(grep -o 'codex second' <<<"$answers" | wc -l)" -eq 1 ] || fail "codex: an answer twice: $answers"
imported=$(grep '"kind":"session.imported"' "$E2E_DIR/codex.ev1")
[ "$(jget '[j.payload.source, j.payload.path, j.payload.sessionId, j.payload.offset,
  j.payload.lines, j.payload.malformed].join(" ")' <<<"$imported")" = \
  "codex $xtranscript $tid $(stat -c %s "$xtranscript") $(wc -l <"$xtranscript") 0" ] ||
  fail "codex: session.imported: $imported"
until_true 20 search_finds quetzalbird "$xid" ||
  fail "search quetzalbird: $(curl -s "$url/v1/search?q=quetzalbird")"

"$bin" --store "$store" check >"$E2E_DIR/check1.out" 2>&1 ||
  fail "agentstream check after the imports: $(cat "$E2E_DIR/check1.out")"

# ---- Again: unchanged ----------------------------------------------------------------------
list=$(curl -sf "$url/v1/imports?source=claude&project=$cwork") || fail "GET /v1/imports claude"
[ "$(jget 'j.transcripts.map((t) => [t.path, t.sessionId, t.agent, t.importedBytes, t.bytes].join(" ")).join(";")' <<<"$list")" = \
  "$ctranscript $sid $cid $cbytes $cbytes" ] || fail "GET /v1/imports claude: $list"
[ "$(jget 'j.source + " " + j.root + " " + j.truncated' <<<"$list")" = "claude $claude_root false" ] ||
  fail "GET /v1/imports claude: $list"
list=$(curl -sf "$url/v1/imports?source=codex&project=$xwork") || fail "GET /v1/imports codex"
[ "$(jget 'j.transcripts.map((t) => [t.path, t.sessionId, t.agent].join(" ")).join(";")' <<<"$list")" = \
  "$xtranscript $tid $xid" ] || fail "GET /v1/imports codex: $list"
[ "$(jget 'j.root' <<<"$list")" = "$CODEX_HOME/sessions" ] || fail "GET /v1/imports codex root: $list"

for source in claude codex; do
  [ $source = claude ] && { id=$cid; work=$cwork; path=$ctranscript; } ||
    { id=$xid; work=$xwork; path=$xtranscript; }
  before=$(all_events "$id" | wc -l)
  out=$("$bin" import $source --project "$work") || fail "import $source again: $out"
  grep -q "^imported: 0 created, 0 appended, [01] unchanged, 0 continued, 0 malformed" <<<"$out" ||
    fail "import $source again: $out"
  if grep -q ' events ' <<<"$out"; then
    [ "$(import_line <(echo "$out") "$path")" = "$id unchanged 0" ] || fail "import $source again: $out"
  fi
  answer=$(post_import "{\"source\":\"$source\",\"path\":\"$path\"}")
  [ "$(status_of "$answer")" = 200 ] || fail "POST /v1/imports $source again: $answer"
  [ "$(jget '[j.agent.id, j.agent.imported, j.outcome, j.events, j.lines, j.importedBytes === j.bytes].join(" ")' \
    <<<"$(body_of "$answer")")" = "$id $source unchanged 0 0 true" ] ||
    fail "POST /v1/imports $source again: $answer"
  [ "$(all_events "$id" | wc -l)" -eq "$before" ] || fail "import $source again added events"
done

out=$("$bin" import claude --project "$cwork" --json) || fail "import --json: $out"
if [ -n "$out" ]; then  # one JSON object per file imported
  [ "$(jget '[j.path, j.outcome, j.agent.id].join(" ")' <<<"$(head -n 1 <<<"$out")")" = \
    "$ctranscript unchanged $cid" ] || fail "import --json: $out"
fi

# ---- claude grown by a direct CLI run: appended --------------------------------------------
claude_run claude3.out "$p3" --resume "$sid"
all_events "$cid" >"$E2E_DIR/claude.ev2" || fail "events of $cid"
tail2=$(tail -n 1 "$E2E_DIR/claude.ev2" | jget 'j.epoch + ":" + j.seq')
"$bin" import claude --project "$cwork" >"$E2E_DIR/import3.out" 2>&1 ||
  fail "import claude after the third run: $(cat "$E2E_DIR/import3.out")"
[ "$(import_line "$E2E_DIR/import3.out" "$ctranscript" | cut -d ' ' -f 1,2)" = "$cid appended" ] ||
  fail "import claude after the third run: $(cat "$E2E_DIR/import3.out")"
grep -qx "imported: 0 created, 1 appended, 0 unchanged, 0 continued, 0 malformed lines skipped" \
  "$E2E_DIR/import3.out" || fail "import claude after the third run: $(cat "$E2E_DIR/import3.out")"
n3=$(import_line "$E2E_DIR/import3.out" "$ctranscript" | cut -d ' ' -f 3)
all_events "$cid" "$tail2" >"$E2E_DIR/claude.new3" || fail "events after $tail2"
show_on_failure "$E2E_DIR/claude.new3"
[ "$(wc -l <"$E2E_DIR/claude.new3")" -eq "$n3" ] || fail "claude: $n3 events reported as appended"
[ "$(texts user.message "$E2E_DIR/claude.new3")" = "$p3" ] ||
  fail "claude: the appended user messages: $(texts user.message "$E2E_DIR/claude.new3")"
[ "$(kinds turn.completed "$E2E_DIR/claude.new3")" -eq 1 ] &&
  [ "$(kinds session.imported "$E2E_DIR/claude.new3")" -eq 1 ] ||
  fail "claude: the appended turn"
texts assistant.message.delta "$E2E_DIR/claude.new3" | grep -q "third answer" ||
  fail "claude: the appended answer"
imported=$(grep '"kind":"session.imported"' "$E2E_DIR/claude.new3")
[ "$(jget 'j.payload.offset' <<<"$imported")" = "$(stat -c %s "$ctranscript")" ] ||
  fail "claude: the second session.imported: $imported"
all_events "$cid" >"$E2E_DIR/claude.ev3" || fail "events of $cid"
[ "$(texts user.message "$E2E_DIR/claude.ev3" | grep -c zebrafinch)" -eq 1 ] ||
  fail "claude: the first prompt twice"
until_true 20 search_finds hummingbirdz "$cid" ||
  fail "search hummingbirdz: $(curl -s "$url/v1/search?q=hummingbirdz")"

# ---- Resumed through the daemon: the past is the CLI's; then continued ---------------------
for source in claude codex; do
  [ $source = claude ] && { id=$cid; work=$cwork; path=$ctranscript; past="zebrafinch"; } ||
    { id=$xid; work=$xwork; path=$xtranscript; past="quetzalbird"; }
  all_events "$id" >"$E2E_DIR/$source.before-send" || fail "events of $id"
  tail_cursor=$(tail -n 1 "$E2E_DIR/$source.before-send" | jget 'j.epoch + ":" + j.seq')
  out=$("$bin" send "$id" "[recall]" --wait 2>&1) || fail "send [recall] to the $source agent: $out"
  grep -q "completed" <<<"$out" || fail "send [recall] to the $source agent: $out"
  all_events "$id" "$tail_cursor" >"$E2E_DIR/$source.recall" || fail "events after $tail_cursor"
  show_on_failure "$E2E_DIR/$source.recall"
  reply=$(texts assistant.message.delta "$E2E_DIR/$source.recall" | tr -d '\n')
  grep -q "Recall: .*$past" <<<"$reply" || fail "$source: the resumed request lacks the past: $reply"
  if [ $source = claude ]; then
    grep -qF "$p2" <<<"$reply" && grep -qF "$p3" <<<"$reply" || fail "claude: recall: $reply"
  else
    grep -qF "$x2" <<<"$reply" || fail "codex: recall: $reply"
  fi
  until_true 20 bash -c "[ \"\$(curl -s '$url/v1/agents/$id' | grep -o '\"status\":\"[a-z]*\"')\" = '\"status\":\"idle\"' ]" ||
    fail "$source: the agent is not idle after the turn"

  # The CLI wrote the daemon's turn into the transcript too: it has grown, but none of it is
  # imported (the agent's log already holds that turn).
  before=$(all_events "$id" | wc -l)
  out=$("$bin" import $source --project "$work") || fail "import $source after the send: $out"
  [ "$(import_line <(echo "$out") "$path")" = "$id continued 0" ] &&
    grep -qx "imported: 0 created, 0 appended, 0 unchanged, 1 continued, 0 malformed lines skipped" <<<"$out" ||
    fail "import $source (CLI) after the send: $out"
  answer=$(post_import "{\"source\":\"$source\",\"path\":\"$path\"}")
  [ "$(status_of "$answer")" = 200 ] || fail "POST /v1/imports $source after the send: $answer"
  [ "$(jget '[j.outcome, j.agent.id, j.events].join(" ")' <<<"$(body_of "$answer")")" = "continued $id 0" ] ||
    fail "POST /v1/imports $source after the send: $answer"
  [ "$(all_events "$id" | wc -l)" -eq "$before" ] || fail "$source continued: events added"
  list=$(curl -sf "$url/v1/imports?source=$source&project=$work") || fail "GET /v1/imports $source"
  [ "$(jget 'j.transcripts.map((t) => t.path + " " + t.agent).join(";")' <<<"$list")" = "$path $id" ] ||
    fail "GET /v1/imports $source after the send: $list"
done

# ---- Refusals and odd transcripts ----------------------------------------------------------
cproject=$(dirname "$ctranscript")
cp "$ctranscript" "$E2E_DIR/outside.jsonl"
expect_status() {  # expect_status STATUS BODY WHAT: POST /v1/imports BODY answers STATUS
  local answer code
  case $1 in 400) code=invalid_argument ;; 404) code=not_found ;; 413) code=too_large ;; esac
  answer=$(post_import "$2")
  [ "$(status_of "$answer")" = "$1" ] && grep -q "\"code\":\"$code\"" <<<"$answer" ||
    fail "$3: not $1 $code: $answer"
}
expect_status 400 "{\"source\":\"claude\",\"path\":\"$E2E_DIR/outside.jsonl\"}" "a path outside the root"
expect_status 400 "{\"source\":\"claude\",\"path\":\"$cproject/../../../../outside.jsonl\"}" \
  "a path out of the root through .."
expect_status 400 "{\"source\":\"claude\",\"path\":\"$(basename "$ctranscript")\"}" "a relative path"
expect_status 404 "{\"source\":\"claude\",\"path\":\"$cproject/00000000-0000-4000-8000-000000000000.jsonl\"}" \
  "a missing file"
expect_status 400 "{\"source\":\"gemini\",\"path\":\"$ctranscript\"}" "an unknown source"
expect_status 400 "{\"source\":\"claude\",\"path\":\"$ctranscript\",\"extra\":1}" "an unknown member"
expect_status 400 "{\"source\":\"codex\",\"path\":\"$ctranscript\"}" "a claude file as codex's"
echo '{"type":"user"}' >"$cproject/notes.txt"
expect_status 400 "{\"source\":\"claude\",\"path\":\"$cproject/notes.txt\"}" "not a .jsonl file"
# (named as claude names its transcripts, SESSION.jsonl, which the daemon insists on)
nosession="$cproject/$(cat /proc/sys/kernel/random/uuid).jsonl"
echo '{"type":"future-thing","x":1}' >"$nosession"
expect_status 400 "{\"source\":\"claude\",\"path\":\"$nosession\"}" "no session id or cwd"
huge="$cproject/$(cat /proc/sys/kernel/random/uuid).jsonl"
truncate -s $((1024 * 1024 * 1024 + 1)) "$huge"  # sparse
expect_status 413 "{\"source\":\"claude\",\"path\":\"$huge\"}" "a file over 1 GiB"
rm -f "$cproject/notes.txt" "$nosession" "$huge"
for query in "source=gemini" "source=claude&limit=0" "source=claude&since=yesterday"; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/imports?$query")" = 400 ] ||
    fail "GET /v1/imports?$query is not 400"
done
"$bin" import gemini >/dev/null 2>&1 && fail "import gemini succeeded"

# A copy with a session id of its own, a line that is no JSON object and a record type no CLI
# writes (yet).
copy_id=$(cat /proc/sys/kernel/random/uuid)
odd="$cproject/$copy_id.jsonl"
{
  sed -n "s/$sid/$copy_id/g; 1,3p" "$ctranscript"
  echo 'this line is not JSON'
  sed -n "s/$sid/$copy_id/g; 4,\$p" "$ctranscript"
  echo '{"type":"future-thing","x":1}'
} >"$odd"
answer=$(post_import "{\"source\":\"claude\",\"path\":\"$odd\"}")
[ "$(status_of "$answer")" = 200 ] || fail "POST /v1/imports of the odd copy: $answer"
body=$(body_of "$answer")
[ "$(jget '[j.outcome, j.malformed, j.skipped["future-thing"], j.lines, j.importedBytes, j.bytes, j.agent.imported].join(" ")' <<<"$body")" = \
  "created 1 1 $(wc -l <"$odd") $(stat -c %s "$odd") $(stat -c %s "$odd") claude" ] ||
  fail "the odd copy: $answer"
odd_id=$(jget 'j.agent.id' <<<"$body")
[ "$odd_id" != "$cid" ] || fail "the copy got the original's agent"
all_events "$odd_id" >"$E2E_DIR/odd.ev" || fail "events of $odd_id"
[ "$(texts user.message "$E2E_DIR/odd.ev" | grep -c zebrafinch)" -eq 1 ] || fail "the odd copy's prompts"
imported=$(grep '"kind":"session.imported"' "$E2E_DIR/odd.ev")
[ "$(jget '[j.payload.sessionId, j.payload.malformed, j.payload.skipped["future-thing"]].join(" ")' <<<"$imported")" = \
  "$copy_id 1 1" ] || fail "the odd copy's session.imported: $imported"
answer=$(post_import "{\"source\":\"claude\",\"path\":\"$odd\"}")
[ "$(jget 'j.outcome + " " + j.agent.id' <<<"$(body_of "$answer")")" = "unchanged $odd_id" ] ||
  fail "the odd copy again: $answer"

"$bin" --store "$store" check >"$E2E_DIR/check2.out" 2>&1 ||
  fail "agentstream check at the end: $(cat "$E2E_DIR/check2.out")"
kill_daemon d
echo "import e2e: claude and codex transcripts imported (created, unchanged, appended, continued)," \
  "resumed through the daemon with their past; refusals and odd lines counted"

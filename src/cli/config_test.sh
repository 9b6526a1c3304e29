#!/usr/bin/env bash
# The configuration file (docs/cli.md, "The configuration file"), with XDG_CONFIG_HOME in this
# test's own directory: the default file sets the listen address, an ACP agent (the fake ACP
# agent) and a token; the daemon serves on that address and runs that agent, and the environment's
# token beats the file's. A flag beats the file. An unknown table or key, a value of the wrong
# kind or out of range, a file that is not UTF-8, and a missing --config file fail with exit 2
# and a message naming the file, line and key; so does a file (or device) of more than 1 MiB.
# `config show` prints each setting's value and source, never a token.
#   config_test.sh AGENTSTREAM_BINARY
set -u
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
dir=$E2E_DIR
fake="$(cd "$(dirname "$0")/../.." && pwd)/src/providers/acp/testdata/fake_acp_agent.mjs"
command -v node >/dev/null || skip "node is not installed (the fake ACP agent)"
unset AGENTSTREAM_CONFIG AGENTSTREAM_TOKEN AGENTSTREAM_URL
export XDG_CONFIG_HOME=$dir/xdg
conf=$XDG_CONFIG_HOME/agentstream/config.toml
mkdir -p "$(dirname "$conf")"
show_on_failure "$dir/out"

has() {  # has FILE LINE: FILE has exactly the line LINE, once its runs of spaces are squeezed
  tr -s ' ' <"$1" | grep -qxF -- "$2" || fail "$1 lacks the line '$2':"$'\n'"$(cat "$1")"
}

# ---- no file at the default path: every setting has its default ----
"$bin" config show >"$dir/out" 2>&1 || fail "config show without a file"
has "$dir/out" "config \"$conf\" (not found) default"
has "$dir/out" 'serve.listen "127.0.0.1:7600" default'
has "$dir/out" 'serve.token (unset) default'

# ---- the default file sets the listen address, an ACP agent and a token ----
cat >"$conf" <<EOF
# config_test.sh
[serve]
listen = "127.0.0.1:0"   # the kernel picks the port
acp-agent = ["echo=node $fake"]
token = "file-token"
owner-ttl-ms = 20_000
allow-host = []
acp-catalog = ["$dir/catalog.json"]
EOF
# A catalog file in the ACP registry's format: the fake agent, installed on the daemon's PATH.
mkdir -p "$dir/bin"
printf '#!/bin/sh\nexec node %s "$@"\n' "$fake" >"$dir/bin/fake-echo-acp"
chmod +x "$dir/bin/fake-echo-acp"
cat >"$dir/catalog.json" <<EOF
{"version": "1.0.0", "agents": [
  {"id": "fake-echo", "name": "Fake Echo", "version": "1.0.0", "description": "echoes",
   "distribution": {"npx": {"package": "fake-echo@1.0.0", "cmd": "fake-echo-acp"}}}],
 "extensions": []}
EOF
PATH="$dir/bin:$PATH" AGENTSTREAM_TOKEN=env-token "$bin" --data "$dir/a.data" serve >>"$dir/a.log" 2>&1 &
track_pid $!
url=$(wait_for_output "$dir/a.log" '^agentstream: serving on (http://127\.0\.0\.1:[0-9]+)$' 30) ||
  fail "the daemon did not serve on the file's listen address"
client=("$bin" --url "$url")
"${client[@]}" --token file-token agents ls >/dev/null 2>&1 &&
  fail "the file's token was accepted: AGENTSTREAM_TOKEN must override it"
client+=(--token env-token)
"${client[@]}" agents ls >/dev/null || fail "the environment's token was refused"
agent=$("${client[@]}" agents new --provider acp:echo --cwd "$dir") ||
  fail "agents new --provider acp:echo: the file's ACP agent is unknown"
"${client[@]}" send "$agent" "hello from the file" --wait >"$dir/out" 2>&1 ||
  fail "a turn of the file's ACP agent did not complete"
"${client[@]}" history "$agent" --json >"$dir/out" || fail "history"
grep -qF 'Echo: hello from the file' "$dir/out" || fail "the fake ACP agent did not answer"

# ---- the catalog: the file's agent installed and runnable, a built-in one missing ----
"${client[@]}" agents catalog >"$dir/out" || fail "agents catalog"
has "$dir/out" 'acp:fake-echo installed listed Fake Echo 1.0.0'
grep -qE '^acp:cline +missing +listed +Cline .*[(]npm install -g cline@' "$dir/out" ||
  fail "agents catalog: cline is not listed as missing with its install command: $(cat "$dir/out")"
grep -qE '^acp:codex-acp +[a-z]+ +proven ' "$dir/out" || fail "codex-acp is not proven: $(cat "$dir/out")"
"${client[@]}" agents new --provider acp:cline --cwd "$dir" >"$dir/out" 2>&1 &&
  fail "an agent that is not installed was created"
grep -qF 'npm install -g cline@' "$dir/out" || fail "the refusal lacks the install command: $(cat "$dir/out")"
agent=$("${client[@]}" agents new --provider acp:fake-echo --cwd "$dir") ||
  fail "agents new --provider acp:fake-echo: the catalog file's agent is unknown"
"${client[@]}" send "$agent" "hello from the catalog" --wait >"$dir/out" 2>&1 ||
  fail "a turn of the catalog's agent did not complete: $(cat "$dir/out")"
"${client[@]}" history "$agent" --json >"$dir/out" || fail "history"
grep -qF 'Echo: hello from the catalog' "$dir/out" || fail "the catalog's agent did not answer"

# ---- config show: each value with its source; a token is never printed ----
AGENTSTREAM_TOKEN=env-token "$bin" --store memory: --token flag-token config show >"$dir/out" 2>&1 ||
  fail "config show"
has "$dir/out" "config \"$conf\" default"
has "$dir/out" 'store "memory:" flag'
has "$dir/out" 'token (set) flag'
has "$dir/out" 'serve.listen "127.0.0.1:0" config '"$conf"
has "$dir/out" 'serve.token (set) env AGENTSTREAM_TOKEN'
has "$dir/out" "serve.acp-agent [\"echo=node $fake\"] config $conf"
has "$dir/out" "serve.owner-ttl-ms 20000 config $conf"
has "$dir/out" 'serve.io-threads 2 default'
has "$dir/out" 'serve.max-live-agents 256 default'
has "$dir/out" 'serve.allow-origin [] default'
has "$dir/out" "serve.allow-host [] config $conf"
has "$dir/out" 'serve.trusted-proxy [] default'
has "$dir/out" 'serve.push-allow-http false default'
has "$dir/out" 'serve.public-url "" default'
if grep -qE 'env-token|file-token|flag-token' "$dir/out"; then fail "config show printed a token"; fi
AGENTSTREAM_TOKEN=env-token "$bin" config show --json >"$dir/out" || fail "config show --json"
for item in "\"serve.listen\":{\"value\":\"127.0.0.1:0\",\"source\":\"config $conf\"}" \
    "\"serve.acp-agent\":{\"value\":[\"echo=node $fake\"],\"source\":\"config $conf\"}" \
    "\"serve.owner-ttl-ms\":{\"value\":20000,\"source\":\"config $conf\"}" \
    '"serve.token":{"set":true,"source":"env AGENTSTREAM_TOKEN"}' \
    '"serve.io-threads":{"value":2,"source":"default"}'; do
  grep -qF -- "$item" "$dir/out" || fail "config show --json lacks $item: $(cat "$dir/out")"
done
if grep -qE 'env-token|file-token' "$dir/out"; then fail "config show --json printed a token"; fi

# ---- a flag beats the file (here an explicit --config whose listen address is malformed) ----
printf '[serve]\nlisten = "not-an-address"\n' >"$dir/flag.toml"
start_daemon b --config "$dir/flag.toml"  # serve --listen 127.0.0.1:0 --config FILE
AGENTSTREAM_CONFIG=$dir/flag.toml "$bin" config show >"$dir/out" 2>&1 || fail "config show"
has "$dir/out" "config \"$dir/flag.toml\" env AGENTSTREAM_CONFIG"
has "$dir/out" "serve.listen \"not-an-address\" config $dir/flag.toml"

# ---- a bad file: exit 2, and the message names the file, the line and the key ----
refused() {  # refused FILE_TEXT MESSAGE: a file holding FILE_TEXT makes serve fail so
  printf '%s\n' "$1" >"$dir/bad.toml"
  timeout 30 "$bin" --config "$dir/bad.toml" --data "$dir/bad.data" serve --listen 127.0.0.1:0 \
    >"$dir/out" 2>&1
  local status=$?
  [ "$status" -eq 2 ] || fail "exit $status, not 2, for the file '$1'"
  grep -qxF -- "agentstream: $dir/bad.toml: $2" "$dir/out" || fail "the message for '$1'"
}
refused $'[serve]\nlisen = "127.0.0.1:0"' \
  'line 2: serve.lisen: unknown key (`agentstream config show` lists them)'
refused 'colour = true' 'line 1: colour: unknown key (`agentstream config show` lists them)'
refused $'[srve]\nlisten = "x"' 'line 1: unknown table [srve] (tables: [serve])'
refused $'\n[serve]\nowner-ttl-ms = "abc"' \
  'line 3: serve.owner-ttl-ms: expected an integer, got a string'
refused $'[serve]\nowner-ttl-ms = 100' \
  'line 2: serve.owner-ttl-ms: Value 100 not in range 500 to 600000'
refused $'[serve]\nlisten = 5' 'line 2: serve.listen: expected a string, got an integer'
refused $'[serve]\nlisten = ["a", "b"]' 'line 2: serve.listen: takes one value, not an array'
refused $'[serve]\nacp-agent = [1]' \
  'line 2: serve.acp-agent: expected a string or an array of them, got an integer'
refused $'[serve]\nlisten = 127.0.0.1:0' \
  'line 2: expected a value (a "string", an integer, true, false or an [array]), got 127.0.0.1:0'
refused $'[serve]\nlisten = "caf\xE9"' 'line 2: not UTF-8 text (the file must be UTF-8)'
# A catalog file that is not the registry's format stops serve the same way, naming the file.
printf '{"agents": [{"id": "Bad Id"}]}' >"$dir/bad-catalog.json"
printf '[serve]\nacp-catalog = ["%s"]\n' "$dir/bad-catalog.json" >"$dir/bad.toml"
timeout 30 "$bin" --config "$dir/bad.toml" --data "$dir/bad.data" serve --listen 127.0.0.1:0 \
  >"$dir/out" 2>&1
status=$?
[ "$status" -eq 2 ] || fail "exit $status, not 2, for a bad catalog file"
grep -qxF "agentstream: ACP catalog $dir/bad-catalog.json: agent id \"Bad Id\" is not [a-z][a-z0-9-]*" \
  "$dir/out" || fail "the message for a bad catalog file: $(cat "$dir/out")"
# At most 1 MiB is read: an endless device, or a larger file, is refused without reading it all.
for file in /dev/zero big; do
  if [ "$file" = big ]; then
    head -c 1048577 /dev/zero | tr '\0' '#' >"$dir/big.toml"
    file=$dir/big.toml
  fi
  AGENTSTREAM_CONFIG=$file timeout 30 "$bin" config show --json >"$dir/out" 2>&1
  status=$?
  [ "$status" -eq 2 ] || fail "config show with the config file $file: exit $status, not 2"
  grep -qxF "agentstream: cannot read config file $file: larger than 1 MiB (1048576 bytes)" \
    "$dir/out" || fail "the message for the config file $file: $(head -c 300 "$dir/out")"
done
# A missing explicit file is an error too (a missing default file is not: the first check).
for how in flag env; do
  if [ $how = flag ]; then
    "$bin" --config "$dir/missing.toml" --store memory: sessions >"$dir/out" 2>&1
  else
    AGENTSTREAM_CONFIG=$dir/missing.toml "$bin" --store memory: sessions >"$dir/out" 2>&1
  fi
  status=$?
  [ "$status" -eq 2 ] || fail "a missing --config file ($how): exit $status, not 2"
  grep -qxF "agentstream: config file $dir/missing.toml does not exist" "$dir/out" ||
    fail "the message for a missing --config file ($how)"
done
echo "cli config: 1 passed, 0 failed"

#!/usr/bin/env bash
# Builds agentstream (release), starts the daemon on the embedded SQLite store, creates an agent
# session, sends it a prompt and follows it live in this terminal; the web page at
# http://127.0.0.1:7600/ shows the same session. The agent is the real `claude`
# CLI when it is installed and has credentials (ANTHROPIC_API_KEY or ~/.claude/.credentials.json),
# otherwise the built-in scripted agent, and the script says which.
#
# Environment: AGENTSTREAM_LISTEN (default 127.0.0.1:7600), AGENTSTREAM_PROVIDER (claude or
# scripted, to choose), AGENTSTREAM_PROMPT (the first prompt). Ctrl-C stops following and the
# daemon; the session stays in the log.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --preset release -DAGENTSTREAM_BUILD_TESTS=OFF -DAGENTSTREAM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/release --target agentstream
bin="$PWD/build/release/src/cli/agentstream"
# The web page the daemon serves at / (web/dist, found from the binary's location).
(cd web && npm run --silent build >/dev/null)

listen="${AGENTSTREAM_LISTEN:-127.0.0.1:7600}"
export AGENTSTREAM_URL="http://$listen"

provider="${AGENTSTREAM_PROVIDER:-}"
if [[ -z "$provider" ]]; then
  if command -v claude >/dev/null &&
     [[ -n "${ANTHROPIC_API_KEY:-}" || -f "$HOME/.claude/.credentials.json" ]]; then
    provider=claude
  else
    provider=scripted
  fi
fi
if [[ "$provider" == scripted ]]; then
  echo "agentstream: no usable claude CLI with credentials here: using the built-in scripted agent."
fi

log="$(mktemp -t agentstream-serve.XXXXXX.log)"
"$bin" serve --listen "$listen" >"$log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  grep -q "serving on" "$log" && break
  kill -0 $daemon 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.1
done
cat "$log"

agent="$("$bin" agents new --provider "$provider" --cwd "$PWD" --title "run.sh session")"
echo "agentstream: agent $agent ($provider). Watch and drive it in a browser at http://$listen/"
echo "or from another terminal:"
echo "  $bin follow $agent"
echo "  $bin send $agent 'your prompt'"
echo
prompt="${AGENTSTREAM_PROMPT:-List the files in this directory and summarize the README. Then ask permission to run a command.}"
"$bin" send "$agent" "$prompt" >/dev/null
exec_follow() { "$bin" follow "$agent"; }
exec_follow

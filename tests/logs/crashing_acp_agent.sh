#!/usr/bin/env bash
# An ACP agent for logs_e2e_test.sh: JSON-RPC 2.0 over stdio, one message per line. It answers
# initialize and session/new; on its first prompt it writes a line to stderr and kills itself
# with SIGKILL. (The daemon writes each request with "id" before "method".)
while IFS= read -r line; do
  [[ $line =~ \"id\":([0-9]+) ]] || continue
  id=${BASH_REMATCH[1]}
  case $line in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id"
      ;;
    *'"method":"session/new"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"crash-1"}}\n' "$id"
      ;;
    *'"method":"session/prompt"'*)
      echo "crashing_acp_agent: out of cheese, stopping" >&2
      kill -KILL $$
      ;;
  esac
done

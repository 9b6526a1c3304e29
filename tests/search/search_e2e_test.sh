#!/usr/bin/env bash
# Search and titles against a real daemon, on SQLite and (when AGENTSTREAM_TEST_PG names a
# server) on PostgreSQL (docs/protocol.md, "Search" and "Titles"): two scripted agents' turns are
# found by a word of each, over HTTP, the WebSocket-free CLI and narrowed to one agent, newest
# first with the match marked; query text that is syntax to a store is only words; a title is
# recorded and shown; after a kill -9 the daemon still finds the old text and indexes new text.
#   search_e2e_test.sh AGENTSTREAM_BINARY
set -u
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
bin=$1
unset AGENTSTREAM_TOKEN

# hits JSON: the number of hits in a search reply.
hits() { grep -o '"agent":' <<<"$1" | wc -l; }
search() { curl -s "$url/v1/search?$1"; }

run_on() {
  local name=$1 store=$2 a b reply out
  start_daemon "$name" ${store:+--store "$store"}
  url=$(daemon_url "$name")
  export AGENTSTREAM_URL=$url

  a=$("$bin" agents new --provider scripted --title first) || fail "$name: agents new"
  b=$("$bin" agents new --provider scripted) || fail "$name: agents new"
  "$bin" send "$a" "where is the zebracorn hiding" --wait >/dev/null || fail "$name: send a"
  "$bin" send "$b" "a zebracorn and a unicorn" --wait >/dev/null || fail "$name: send b"

  # Both turns, user and assistant text (the scripted agent echoes in several deltas).
  until_true 20 bash -c "[ \$(curl -s '$url/v1/search?q=zebracorn' | grep -o '\"agent\":' | wc -l) -eq 4 ]" ||
    fail "$name: zebracorn not found 4 times: $(search q=zebracorn)"
  reply=$(search q=zebracorn)
  grep -q "\"agent\":\"$b\",\"cursor\":\"1:[0-9]*\",\"time\":[0-9]*,\"kind\":\"assistant.message\"" <<<"$reply" ||
    fail "$name: the newest hit is not b's answer: $reply"
  [ "$(grep -o '"agent":"[^"]*"' <<<"$reply" | head -n 1)" = "\"agent\":\"$b\"" ] ||
    fail "$name: not newest first: $reply"
  grep -q '\\u0002zebracorn\\u0003' <<<"$reply" || fail "$name: the match is not marked: $reply"
  [ "$(hits "$(search "q=zebracorn&agent=$a")")" -eq 2 ] || fail "$name: a's hits"
  [ "$(hits "$(search "q=unicorn+zebracorn")")" -eq 2 ] || fail "$name: both words"
  [ "$(hits "$(search "q=zebracorn&limit=1")")" -eq 1 ] || fail "$name: limit"
  grep -q '"truncated":true' <<<"$(search "q=zebracorn&limit=1")" || fail "$name: truncated"

  # Store syntax in the query is only words; a query without a word is refused.
  [ "$(hits "$(search 'q=%22zebracorn%22+OR+NEAR%28x%29+%2A')")" -eq 0 ] || fail "$name: OR"
  [ "$(hits "$(search 'q=zebracorn%27%3B+--')")" -eq 4 ] || fail "$name: quote"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/search?q=%22%2A%22")" = 400 ] ||
    fail "$name: a query with no word is not 400"

  out=$("$bin" search zebracorn --agent "$b") || fail "$name: agentstream search"
  grep -q "^$b 1:[0-9]* *assistant.message .*\[zebracorn\]" <<<"$out" ||
    fail "$name: search output: $out"

  # Titles.
  "$bin" agents rename "$a" "Zebra hunt" >/dev/null || fail "$name: rename"
  "$bin" agents ls | grep -q "Zebra hunt" || fail "$name: the list lacks the title"
  curl -s "$url/v1/agents/$a/events" | grep -q '"kind":"session.titled"' ||
    fail "$name: no session.titled event"
  "$bin" agents rename "$a" "$(printf 'x%.0s' $(seq 1 300))" >/dev/null 2>&1 &&
    fail "$name: a 300-byte title was accepted"

  # A crash: the index is in the store; new text is indexed by the restarted daemon.
  kill_daemon "$name" KILL
  start_daemon "$name" ${store:+--store "$store"}
  url=$(daemon_url "$name")
  export AGENTSTREAM_URL=$url
  [ "$(hits "$(search q=zebracorn)")" -eq 4 ] || fail "$name: after the crash: $(search q=zebracorn)"
  "$bin" agents show "$a" --json | grep -q '"title":"Zebra hunt"' || fail "$name: title lost"
  "$bin" send "$a" "now the quokka" --wait >/dev/null || fail "$name: send after the crash"
  until_true 20 bash -c "curl -s '$url/v1/search?q=quokka' | grep -q '\"kind\":\"assistant.message\"'" ||
    fail "$name: new text after the crash not found"
  kill_daemon "$name"
}

run_on sqlite ""
if store=$(pg_database 2>/dev/null); then
  run_on postgres "$store"
else
  echo "search_e2e: AGENTSTREAM_TEST_PG is not set; PostgreSQL not covered"
fi
echo "search_e2e: ok"

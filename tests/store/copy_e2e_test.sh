#!/usr/bin/env bash
# `agentstream store copy` (docs/operations.md, "Moving from SQLite to PostgreSQL"): a daemon
# fills a SQLite store (scripted agents, a fork, a rewind, a consumer) and its generic streams
# (JSON with an idempotent producer, bytes, a closed stream, a TTL, a pull-wake subscription); the
# copy is refused while the daemon runs; SQLite -> PostgreSQL -> SQLite gives the same digests,
# the same event pages and the same streams; a daemon on the last copy lists every agent, keeps
# the consumer's positions, resumes every agent with a new prompt, serves every stream with the
# same offsets and bytes, de-duplicates the producer's retry and keeps the subscription; a second
# copy writes nothing; a copy killed with SIGKILL in the middle
# is finished by the rerun; other sessions need --merge, and a session that differs is refused by
# name; a source of a newer schema is refused.
#   copy_e2e_test.sh AGENTSTREAM_BINARY GEN_LONG_SESSION_BINARY
#   (AGENTSTREAM_TEST_PG names the server; skipped without)
set -euo pipefail
source "$(cd "$(dirname "$0")/../.." && pwd)/tests/lib/e2e.sh"
E2E_BIN=$1
GEN=$2
pg=$(pg_database) || skip "AGENTSTREAM_TEST_PG is not set"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
serve=(--scripted-chunk-ms 0)
as() { "$E2E_BIN" "$@"; }
# Runs a command expected to fail with exit 2, its stderr to $E2E_DIR/refused.
refused() {
  local code
  set +e
  "$@" >/dev/null 2>"$E2E_DIR/refused"
  code=$?
  set -e
  [ "$code" -eq 2 ] || fail "expected exit 2 from $*: exit $code, $(cat "$E2E_DIR/refused")"
}
digests() { grep -E '^[^ ]+  [0-9]+ events  sha256 ' "$1" | sort; }

# ---- a daemon fills a SQLite store ----
start_daemon a "${serve[@]}"
src="$(daemon_data a)/agentstream.db"
as --url "$a_url" consumers new tail --jsonl "$E2E_DIR/tail.jsonl" >/dev/null || fail "consumer"
agents=()
for i in 1 2 3; do
  agent=$(as --url "$a_url" agents new --provider scripted --cwd "$E2E_DIR" --title "copy $i") ||
    fail "agents new"
  agents+=("$agent")
  for n in 1 2; do as --url "$a_url" send "$agent" "prompt $n" --wait >/dev/null || fail "send"; done
done
fork=$(as --url "$a_url" fork "${agents[0]}" --at 1:5) || fail "fork"
agents+=("$fork")
as --url "$a_url" send "$fork" "after the fork" --wait >/dev/null || fail "send to the fork"
as --url "$a_url" rewind "${agents[1]}" --to 1:5 >/dev/null || fail "rewind"
as --url "$a_url" send "${agents[1]}" "after the rewind" --wait >/dev/null || fail "send after rewind"
until_true 30 test "$(wc -l <"$E2E_DIR/tail.jsonl" 2>/dev/null || echo 0)" -gt 0 ||
  fail "the consumer delivered nothing"

# ---- and generic streams, with a producer and a subscription ----
# sreq ARGS...: curl, the body to $E2E_DIR/sbody, prints the status.
sreq() { curl -s -o "$E2E_DIR/sbody" -w '%{http_code}' "$@"; }
json=(-H 'Content-Type: application/json')
text=(-H 'Content-Type: text/plain')
[ "$(sreq -X PUT "$a_url/v1/stream/e2e/json" "${json[@]}")" = 201 ] || fail "create e2e/json"
for seq in 0 1 2; do
  [ "$(sreq -X POST "$a_url/v1/stream/e2e/json" "${json[@]}" -H 'Producer-Id: p' \
    -H 'Producer-Epoch: 0' -H "Producer-Seq: $seq" --data-binary "{\"n\":$seq}")" = 200 ] ||
    fail "producer append $seq: $(cat "$E2E_DIR/sbody")"
done
head -c 70000 /dev/urandom >"$E2E_DIR/blob"
[ "$(sreq -X PUT "$a_url/v1/stream/e2e/bin" -H 'Content-Type: application/octet-stream' \
  --data-binary @"$E2E_DIR/blob")" = 201 ] || fail "create e2e/bin"
[ "$(sreq -X PUT "$a_url/v1/stream/e2e/closed" "${text[@]}" -H 'Stream-Closed: true' \
  --data-binary done)" = 201 ] || fail "create e2e/closed"
[ "$(sreq -X PUT "$a_url/v1/stream/e2e/ttl" "${text[@]}" -H 'Stream-TTL: 3600' \
  --data-binary t)" = 201 ] || fail "create e2e/ttl"
[ "$(sreq -X PUT "$a_url/v1/stream/e2e/wakes" "${json[@]}")" = 201 ] || fail "create e2e/wakes"
[ "$(sreq -X PUT "$a_url/v1/stream/__ds/subscriptions/s1" "${json[@]}" --data-binary \
  '{"type":"pull-wake","streams":["e2e/json"],"wake_stream":"e2e/wakes"}')" = 201 ] ||
  fail "subscribe: $(cat "$E2E_DIR/sbody")"
streams=(json bin closed ttl wakes)
# stream_state URL NAME: the stream's headers that the copy keeps, then its bytes to $E2E_DIR/NAME.*
stream_state() {
  curl -s -D - -o "$E2E_DIR/$2.$3" "$1/v1/stream/e2e/$2?offset=-1" | tr -d '\r' |
    grep -iE '^(stream-next-offset|stream-closed|content-type|stream-ttl):' | sort -f
}
for name in "${streams[@]}"; do stream_state "$a_url" "$name" src >"$E2E_DIR/$name.src.head"; done
grep -qi '^stream-next-offset: ' "$E2E_DIR/json.src.head" || fail "no offset: $(cat "$E2E_DIR/json.src.head")"

refused as store copy --from "$src" --to "$pg"
grep -q "in use" "$E2E_DIR/refused" || fail "the refusal names the store in use: $(cat "$E2E_DIR/refused")"
kill_daemon a
positions=$(as --store "$src" events "${agents[0]}" --json --limit 1 >/dev/null; sqlite3 "$src" \
  "SELECT consumer, session, epoch, seq FROM consumer_positions ORDER BY 1, 2")
[ -n "$positions" ] || fail "no consumer positions in the source"

# ---- SQLite -> PostgreSQL -> SQLite ----
as store copy --from "$src" --to "$pg" >"$E2E_DIR/to_pg" || fail "copy to PostgreSQL"
mkdir -p "$(daemon_data c)"
dst="$(daemon_data c)/agentstream.db"
as store copy --from "$pg" --to "$dst" --json >"$E2E_DIR/to_sqlite.json" 2>"$E2E_DIR/progress" ||
  fail "copy back to SQLite"
grep -q '"phase":"verify"' "$E2E_DIR/progress" || fail "no JSON progress: $(cat "$E2E_DIR/progress")"
grep -q '"phase":"streams-verify","streams_done":5,"streams_total":5' "$E2E_DIR/progress" ||
  fail "no JSON progress of the streams: $(cat "$E2E_DIR/progress")"
grep -q "^copied 5 of 5 streams, 6 of 6 messages, 1 of 1 subscriptions and their keys; digests equal" \
  "$E2E_DIR/to_pg" || fail "the streams' report: $(cat "$E2E_DIR/to_pg")"
[ "$(grep -c '^stream /v1/stream/e2e/[a-z]*  [0-9]* messages  tail [0-9_]*  sha256 ' \
  "$E2E_DIR/to_pg")" -eq 5 ] || fail "a digest per stream: $(cat "$E2E_DIR/to_pg")"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const d of r.stream_digests)
    console.log(`stream ${d.path}  ${d.messages} messages  tail ${d.tail}  sha256 ${d.sha256}`);
' "$E2E_DIR/to_sqlite.json" >"$E2E_DIR/back_stream_digests"
[ "$(grep '^stream ' "$E2E_DIR/to_pg")" = "$(cat "$E2E_DIR/back_stream_digests")" ] ||
  fail "stream digests differ: $(cat "$E2E_DIR/back_stream_digests")"
[ "$(digests "$E2E_DIR/to_pg" | wc -l)" -eq "${#agents[@]}" ] || fail "a digest per session"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  for (const d of r.digests) console.log(`${d.session}  ${d.events} events  sha256 ${d.sha256}`);
' "$E2E_DIR/to_sqlite.json" | sort >"$E2E_DIR/back_digests"
[ "$(digests "$E2E_DIR/to_pg")" = "$(cat "$E2E_DIR/back_digests")" ] ||
  fail "digests differ: $(cat "$E2E_DIR/to_pg") / $(cat "$E2E_DIR/back_digests")"
for agent in "${agents[@]}"; do
  for store in "$pg" "$dst"; do
    [ "$(as --store "$src" events "$agent" --json --limit 10000)" = \
      "$(as --store "$store" events "$agent" --json --limit 10000)" ] ||
      fail "$agent: the pages of $store differ from the source's"
  done
done
[ "$(sqlite3 "$dst" "SELECT consumer, session, epoch, seq FROM consumer_positions ORDER BY 1, 2")" = \
  "$positions" ] || fail "the consumer positions differ after the round trip"
as store copy --from "$pg" --to "$dst" >"$E2E_DIR/again" || fail "second copy"
grep -q "copied 0 of ${#agents[@]} sessions, 0 of" "$E2E_DIR/again" ||
  fail "a second copy wrote: $(cat "$E2E_DIR/again")"
grep -q "^copied 0 of 5 streams, 0 of 6 messages, 0 of 1 subscriptions; digests equal" \
  "$E2E_DIR/again" || fail "a second copy wrote streams: $(cat "$E2E_DIR/again")"
# `check` finds nothing wrong on the source or the copy (a fork's inherited events are its
# parent's, checked with the parent).
for store in "$src" "$dst"; do
  as --store "$store" check >"$E2E_DIR/check" 2>&1 || fail "check of $store: $(cat "$E2E_DIR/check")"
  grep -q "checked ${#agents[@]} sessions, [0-9]* events: 0 violations" "$E2E_DIR/check" ||
    fail "check of $store: $(cat "$E2E_DIR/check")"
done

# ---- a daemon on the copy serves and resumes every agent ----
start_daemon c "${serve[@]}"
listed=$(as --url "$c_url" agents ls --json)
for agent in "${agents[@]}"; do
  grep -q "\"$agent\"" <<<"$listed" || fail "$agent is not listed on the copy"
  as --url "$c_url" send "$agent" "after the copy" --wait >/dev/null || fail "resume $agent"
  as --url "$c_url" history "$agent" --json | grep -q "after the copy" ||
    fail "$agent: the new turn is not in its history"
done
as --url "$c_url" consumers ls | grep -q tail || fail "the consumer is not on the copy"
# Every stream served with the same headers, offsets and bytes; the producer's retry of its last
# append is a duplicate, its next seq is accepted; the closed stream stays closed; the
# subscription is there.
for name in "${streams[@]}"; do
  stream_state "$c_url" "$name" copy >"$E2E_DIR/$name.copy.head"
  diff "$E2E_DIR/$name.src.head" "$E2E_DIR/$name.copy.head" >/dev/null ||
    fail "e2e/$name: $(cat "$E2E_DIR/$name.src.head") / $(cat "$E2E_DIR/$name.copy.head")"
  cmp -s "$E2E_DIR/$name.src" "$E2E_DIR/$name.copy" || fail "e2e/$name: other bytes on the copy"
done
cmp -s "$E2E_DIR/blob" "$E2E_DIR/bin.copy" || fail "e2e/bin does not hold the blob"
[ "$(sreq -X POST "$c_url/v1/stream/e2e/json" "${json[@]}" -H 'Producer-Id: p' \
  -H 'Producer-Epoch: 0' -H 'Producer-Seq: 2' --data-binary '{"n":2}')" = 204 ] ||
  fail "the producer's retry was not a duplicate: $(cat "$E2E_DIR/sbody")"
[ "$(sreq -X POST "$c_url/v1/stream/e2e/json" "${json[@]}" -H 'Producer-Id: p' \
  -H 'Producer-Epoch: 0' -H 'Producer-Seq: 3' --data-binary '{"n":3}')" = 200 ] ||
  fail "the producer's next append: $(cat "$E2E_DIR/sbody")"
[ "$(sreq -X POST "$c_url/v1/stream/e2e/closed" "${text[@]}" --data-binary more)" = 409 ] ||
  fail "an append to the closed stream: $(cat "$E2E_DIR/sbody")"
[ "$(sreq "$c_url/v1/stream/__ds/subscriptions/s1")" = 200 ] &&
  grep -q '"wake_stream":"e2e/wakes"' "$E2E_DIR/sbody" ||
  fail "the subscription on the copy: $(cat "$E2E_DIR/sbody")"
kill_daemon c

# ---- other sessions need --merge; a differing session is refused by name ----
other="$E2E_DIR/other.db"
as --store "$other" demo --turns 1 --delay-ms 0 >/dev/null || fail "demo"
refused as store copy --from "$src" --to "$other"
grep -q -- "--merge" "$E2E_DIR/refused" || fail "the refusal names --merge: $(cat "$E2E_DIR/refused")"
[ "$(sqlite3 "$other" "SELECT count(*) FROM sessions")" -eq 1 ] || fail "a refused copy wrote"
as store copy --from "$src" --to "$other" --merge >/dev/null || fail "copy with --merge"
[ "$(sqlite3 "$other" "SELECT count(*) FROM sessions")" -eq $((${#agents[@]} + 1)) ] ||
  fail "--merge did not add every session"
# Every agent went on at the copy: each differs from the source now, with --merge or without.
events_before=$(sqlite3 "$dst" "SELECT count(*) FROM events")
for merge in "" --merge; do
  refused as store copy --from "$src" --to "$dst" $merge
  for agent in "${agents[@]}"; do
    grep -q "$agent" "$E2E_DIR/refused" || fail "the conflict names $agent: $(cat "$E2E_DIR/refused")"
  done
done
[ "$(sqlite3 "$dst" "SELECT count(*) FROM events")" -eq "$events_before" ] ||
  fail "a refused merge wrote"

# ---- a newer source is refused ----
newer="$E2E_DIR/newer.db"
cp "$dst" "$newer"
sqlite3 "$newer" "PRAGMA user_version = 99"
refused as store copy --from "$newer" --to "$E2E_DIR/never.db"
grep -q "schema version 99" "$E2E_DIR/refused" || fail "newer: $(cat "$E2E_DIR/refused")"

# ---- kill -9 in the middle, then the rerun finishes ----
"$GEN" --data "$E2E_DIR/big" --events 60000 --batch 10 >/dev/null || fail "gen_long_session"
big="$E2E_DIR/big/agentstream.db"
pg2=$(pg_database) || fail "a second database"
"$E2E_BIN" store copy --from "$big" --to "$pg2" --json >/dev/null 2>"$E2E_DIR/killed" &
copier=$!
track_pid "$copier"
until_true 60 grep -q '"phase":"copy","sessions_done":0,"sessions_total":1,"events_done":[1-9]' \
  "$E2E_DIR/killed" || fail "the copy made no progress: $(tail -3 "$E2E_DIR/killed")"
kill -9 "$copier"
wait "$copier" 2>/dev/null || true
partial=$(psql "$pg2" -qAt -c "SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM events")
[ "$partial" -gt 0 ] && [ "$partial" -lt 60000 ] || fail "killed after $partial of 60000 events"
as store copy --from "$big" --to "$pg2" >"$E2E_DIR/rerun" || fail "rerun"
grep -q "copied 1 of 1 sessions, $((60000 - partial)) of 60000 events" "$E2E_DIR/rerun" ||
  fail "the rerun: $(tail -1 "$E2E_DIR/rerun")"
echo "copy e2e: ${#agents[@]} sessions and ${#streams[@]} streams SQLite -> PostgreSQL -> SQLite with equal" \
  "digests, pages and stream reads," \
  "served and resumed; killed at $partial of 60000 events and finished"

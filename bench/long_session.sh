#!/usr/bin/env bash
# Sessions of any length (docs/benchmarks.md): what a daemon restart costs on one session of N
# events, for N = 1,000, 100,000 and 1,000,000 (and 10,000,000 with --with-10m). For each size:
# gen_long_session writes one idle agent session of N events into a fresh store (SQLite in a fresh
# data directory; also a fresh PostgreSQL database when AGENTSTREAM_BENCH_PG names a server's
# postgresql:// URL, e.g. from tools/pg_test_cluster.sh), then ROUNDS times the release daemon
# starts on it and bench/long_session.mjs measures ready, the first tail page, a `before` page in
# the middle, the first prompt's acceptance and the peak RSS (also as it was after the two pages,
# before the prompt loaded the agent), and stops it. Each figure is the median of the rounds after
# the first (whose load finds no checkpoint and whose first page finds no timeline index; its
# prompt, peak RSS and tail page are shown apart); the
# table gives each next to the 1,000-event session of the same store.
# Builds nothing: takes a build directory configured with AGENTSTREAM_BUILD_BENCHMARKS=ON in which
# `agentstream` and `gen_long_session` are built (use a release build).
# Usage: bench/long_session.sh BUILD_DIR [ROUNDS] [--with-10m]
set -euo pipefail
build=$(realpath "${1:?usage: long_session.sh BUILD_DIR [ROUNDS] [--with-10m]}")
rounds=3
sizes=(1000 100000 1000000)
for arg in "${@:2}"; do
  case "$arg" in
    --with-10m) sizes+=(10000000) ;;
    *[!0-9]* | "") echo "unknown argument $arg" >&2; exit 2 ;;
    *) rounds=$arg ;;
  esac
done
bin="$build/src/cli/agentstream"
gen="$build/bench/gen_long_session"
if [ ! -x "$bin" ] || [ ! -x "$gen" ]; then
  echo "build agentstream and gen_long_session in $build" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-long.XXXXXX")
pg_db=""
drop_db() {
  [ -n "$pg_db" ] || return 0
  psql "$AGENTSTREAM_BENCH_PG" -qAt -c "DROP DATABASE IF EXISTS $pg_db WITH (FORCE)" >/dev/null 2>&1 ||
    echo "bench: could not drop database $pg_db" >&2
  pg_db=""
}
cleanup() {
  drop_db
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stores=(sqlite)
if [ -n "${AGENTSTREAM_BENCH_PG:-}" ]; then
  [[ $AGENTSTREAM_BENCH_PG =~ ^(postgres(ql)?://[^/?]*)(/[^?]*)?(\?.*)?$ ]] ||
    { echo "AGENTSTREAM_BENCH_PG is not a postgresql:// URL" >&2; exit 2; }
  pg_prefix=${BASH_REMATCH[1]}
  pg_params=${BASH_REMATCH[4]}
  stores+=(postgresql)
fi

# measure STORE SIZE: one line "STORE SIZE GEN_SECONDS {median figures as JSON}" on stdout.
measure() {
  local store=$1 size=$2 url="" dir="$tmp/$1-$2" line session seconds round
  mkdir -p "$dir"
  if [ "$store" = postgresql ]; then
    pg_db="long_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
    psql "$AGENTSTREAM_BENCH_PG" -v ON_ERROR_STOP=1 -qAt -c "CREATE DATABASE $pg_db" >/dev/null
    url="$pg_prefix/$pg_db$pg_params"
  fi
  line=$("$gen" --data "$dir/data" --events "$size" ${url:+--store "$url"})
  [[ $line =~ ^session\ ([^ ]+)\ .*seconds\ ([0-9.]+)$ ]] || { echo "gen: $line" >&2; exit 1; }
  session=${BASH_REMATCH[1]}
  seconds=${BASH_REMATCH[2]}
  echo "$store $size: generated in $seconds s ($session)" >&2
  : >"$dir/rounds.jsonl"
  for round in $(seq 1 "$rounds"); do
    node "$here/long_session.mjs" "$bin" "$dir/data" "$session" "$size" "$url" "bench-$round" \
      >>"$dir/rounds.jsonl" || { tail -n 20 "$dir/daemon.log" >&2; exit 1; }
    echo "  round $round: $(tail -n 1 "$dir/rounds.jsonl")" >&2
  done
  echo "$store $size $seconds $(node -e '
// The first round loads a session no daemon has checkpointed (as one written by an older build):
// its load reads the whole history once and stores a checkpoint. The medians are of the rounds
// after it (of all rounds when there is one).
const all = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const rows = all.length > 1 ? all.slice(1) : all;
const median = (k) => { const v = rows.map((r) => r[k]).sort((a, b) => a - b); return v[(v.length - 1) >> 1]; };
const out = {};
for (const k of Object.keys(rows[0])) out[k] = median(k);
out.first_prompt_ms = all[0].prompt_ms;
out.first_tail_ms = all[0].tail_ms;
out.first_rss_mib = all[0].peak_rss_mib;
console.log(JSON.stringify(out));' "$dir/rounds.jsonl")"
  drop_db
  rm -rf "$dir"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
: >"$tmp/results"
for store in "${stores[@]}"; do
  for size in "${sizes[@]}"; do measure "$store" "$size" >>"$tmp/results"; done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# The table, with each figure over that of the store's 1,000-event session.
# shellcheck disable=SC2016 # the program is JavaScript, not shell
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
const rows = lines.map((l) => {
  const [store, size, gen, json] = l.split(" ");
  return { store, size: Number(size), gen: Number(gen), ...JSON.parse(json) };
});
const keys = ["ready_ms", "tail_ms", "before_ms", "prompt_ms", "peak_rss_mib", "pages_rss_mib",
  "anon_mib", "first_prompt_ms", "first_rss_mib", "first_tail_ms"];
const base = {};
for (const r of rows) if (r.size === 1000) base[r.store] = r;
console.log(`rounds: ${process.argv[2]} (medians of the rounds after the first)`);
console.log("| events | store | generated in | ready ms | tail page ms | before page ms | first prompt ms | peak RSS MiB | peak RSS after the pages MiB | anonymous RSS at the end MiB | round 1 (no checkpoint): first prompt ms | round 1: peak RSS MiB | round 1 (no index): tail page ms |");
console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
const fmt = (v) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
for (const r of rows) {
  const b = base[r.store];
  const cells = keys.map((k) => b && r !== b ? `${fmt(r[k])} (${(r[k] / b[k]).toFixed(1)}x)` : fmt(r[k]));
  console.log(`| ${r.size.toLocaleString("en-US")} | ${r.store} | ${r.gen.toFixed(1)} s | ${cells.join(" | ")} |`);
}' "$tmp/results" "$rounds"

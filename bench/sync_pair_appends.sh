#!/usr/bin/env bash
# Durable appends per second on one PostgreSQL server against a primary with a synchronous
# standby (tools/pg_test_pair.sh): log_load (a daemon's EventLog, bench/log_load.cc) on each in
# turn, ROUNDS times, for each mode. Both setups are throw-away clusters on this machine's disk,
# fsync on, synchronous_commit on; the pair's COMMIT also waits for the standby's flush.
# docs/benchmarks.md, "Failover of the database".
#   bench/sync_pair_appends.sh [BUILD_DIR [SECONDS [ROUNDS]]]    (as root: the servers run as postgres)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build=${1:-$root/build/release}
seconds=${2:-3}
rounds=${3:-2}
load="$build/bench/log_load"
dir=$(mktemp -d /tmp/agentstream-syncbench.XXXXXX)
chmod 755 "$dir"
cleanup() {
  "$root/tools/pg_test_cluster.sh" stop "$dir/single" >/dev/null 2>&1 || true
  "$root/tools/pg_test_pair.sh" stop "$dir/pair" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
single=$("$root/tools/pg_test_cluster.sh" start "$dir/single")
pair=$("$root/tools/pg_test_pair.sh" start "$dir/pair")
rate() {  # rate OUTPUT_FILE: the appends/s column of the measured row
  awk '$1 == "pipelined" || $1 == "synchronous" { print $3 }' "$1"
}
printf '%-16s %6s %14s %14s %8s\n' mode round "one server" "sync pair" ratio
for only in pipelined:64 synchronous:64 synchronous:1; do
  for round in $(seq "$rounds"); do
    "$load" --dir "$dir/ll1" --seconds "$seconds" --store "$single" --only "$only" >"$dir/one.out"
    "$load" --dir "$dir/ll2" --seconds "$seconds" --store "$pair" --only "$only" >"$dir/pair.out"
    one=$(rate "$dir/one.out")
    two=$(rate "$dir/pair.out")
    printf '%-16s %6s %14s %14s %8s\n' "$only" "$round" "$one" "$two" \
      "$(awk "BEGIN { printf \"%.2f\", $two / $one }")"
  done
done

#!/usr/bin/env bash
# Durable appends per second of three daemons against one on the same PostgreSQL database: one
# log_load process (a daemon's EventLog, bench/log_load.cc), then three at once, each on sessions
# of its own, for each mode; the three rates are summed. docs/benchmarks.md, "Several daemons".
#   bench/multi_daemon_appends.sh STORE_URL [SECONDS]
set -euo pipefail
store=${1:?usage: multi_daemon_appends.sh STORE_URL [SECONDS]}
seconds=${2:-3}
load="$(cd "$(dirname "$0")/.." && pwd)/build/release/bench/log_load"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
rate() {  # rate OUTPUT_FILE: the appends/s column of the measured row
  awk '$1 == "pipelined" || $1 == "synchronous" { print $3 }' "$1"
}
printf '%-16s %14s %14s %8s\n' mode "1 daemon" "3 daemons" ratio
for only in pipelined:64 synchronous:64 synchronous:1; do
  "$load" --dir "$dir/one" --seconds "$seconds" --store "$store" --only "$only" >"$dir/one.out"
  for i in 1 2 3; do
    "$load" --dir "$dir/p$i" --seconds "$seconds" --store "$store" --only "$only" >"$dir/p$i.out" &
  done
  wait
  one=$(rate "$dir/one.out")
  three=$(( $(rate "$dir/p1.out") + $(rate "$dir/p2.out") + $(rate "$dir/p3.out") ))
  printf '%-16s %14s %14s %8s\n' "$only" "$one" "$three" "$(awk "BEGIN { printf \"%.2f\", $three / $one }")"
done

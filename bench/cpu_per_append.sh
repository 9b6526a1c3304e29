#!/usr/bin/env bash
# CPU per durable append: the daemon's generic Durable Streams (`agentstream serve`, SQLite
# journal) against the floor of the same design on this machine (bench/append_floor.cc), under
# the same wrk load (bench/append_load.lua: 256-byte JSON appends over 100 streams), alternately,
# R rounds. Each round measures two loads, `wrk -t2 -c32` and `wrk -t1 -c1`, each first against
# the daemon, then against the floor; every run starts its server on a fresh data directory,
# creates the 100 streams with PUT, and reads the server's CPU time (utime + stime of
# /proc/PID/stat, all its threads) before and after the wrk run. Per run it prints appends/s
# (wrk's Requests/sec), acknowledged appends (answered 2xx), and CPU microseconds per
# acknowledged append; after each pair, daemon/floor of both. With REFERENCE=1 each load is also
# run against the reference Durable Streams server (npm @durable-streams/server 0.3.7, file-backed;
# `npm ci` in tests/conformance first), third, and the round prints daemon/reference.
#
# Builds nothing. Usage:
#   bench/cpu_per_append.sh [DAEMON_BIN [FLOOR_BIN]]
# defaults build/release/src/cli/agentstream and build/release/bench/append_floor (or the
# DAEMON and FLOOR environment variables); DAEMON=none measures the floor alone. R (rounds,
# default 3), DURATION (of each wrk run, default 10s) and LOADS (the wrk loads as
# "THREADS CONNECTIONS" separated by commas, default "2 32,1 1") come from the environment:
#   R=1 DURATION=3s LOADS="2 32" bench/cpu_per_append.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
daemon_bin=${1:-${DAEMON:-$root/build/release/src/cli/agentstream}}
floor_bin=${2:-${FLOOR:-$root/build/release/bench/append_floor}}
rounds=${R:-3}
duration=${DURATION:-10s}
IFS=, read -r -a loads <<<"${LOADS:-2 32,1 1}"
script="$root/bench/append_load.lua"
[ "$daemon_bin" = none ] || [ -x "$daemon_bin" ] || { echo "no daemon binary at $daemon_bin" >&2; exit 2; }
[ -x "$floor_bin" ] || { echo "no floor binary at $floor_bin (build target append_floor)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 2; }
# shellcheck source=bench/server_cpu.sh
source "$root/bench/server_cpu.sh"

# Creates bench-0 .. bench-99 (JSON streams) over one connection; fails unless each is 2xx.
create_streams() {
  local urls=() codes
  for k in $(seq 0 99); do urls+=("$url/v1/stream/bench-$k"); done
  codes=$(curl -s -X PUT -H 'Content-Type: application/json' -o /dev/null -w '%{http_code}\n' \
    "${urls[@]}")
  if grep -qv '^2' <<<"$codes"; then
    echo "creating the streams failed: $(sort <<<"$codes" | uniq -c | tr '\n' ' ')" >&2
    exit 1
  fi
}

# Runs wrk with THREADS and CONNECTIONS against SIDE; sets $result to "appends_per_s acked
# cpu_us_per_append". Runs in this shell, not a subshell, so that cleanup knows the server.
measure() {
  local side=$1 threads=$2 connections=$3 before after report rate acked
  case $side in
    daemon) start_server daemon "$daemon_bin" ;;
    floor) start_server floor "$floor_bin" ;;
    reference) start_server reference ;;
  esac
  create_streams
  before=$(cpu_ticks)
  report=$(wrk -t"$threads" -c"$connections" -d"$duration" -s "$script" "$url")
  after=$(cpu_ticks)
  stop_server
  rate=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$report")
  acked=$(awk '/^append_load / { split($2, r, "="); split($3, f, "="); print r[2] - f[2] }' \
    <<<"$report")
  if [ -z "$rate" ] || [ -z "$acked" ]; then
    echo "unexpected wrk output:" >&2
    echo "$report" >&2
    exit 1
  fi
  result=$(awk -v rate="$rate" -v acked="$acked" -v t="$((after - before))" -v hz="$ticks" \
    'BEGIN { printf "%.0f %d %.1f\n", rate, acked, (acked > 0 ? t * 1e6 / hz / acked : 0) }')
}

# Measures SIDE under the current load and prints its figures as LABEL; they stay in $result.
run_side() {
  local figures
  measure "$1" "$threads" "$connections"
  read -r -a figures <<<"$result"
  printf '%s, %s %s appends/s, %s acknowledged, %s CPU us/append\n' "$label" "$2" "${figures[@]}"
}

# Prints the daemon's appends/s and CPU per append over those of another side.
ratios() {
  local name=$1 rate=$2 cpu=$3
  awk -v label="$label" -v n="$name" -v dr="${d[0]}" -v xr="$rate" -v dc="${d[2]}" -v xc="$cpu" \
    'BEGIN { printf "%s, daemon/%s: appends/s %.2f, CPU us/append %.2f\n", label, n,
             (xr > 0 ? dr / xr : 0), (xc > 0 ? dc / xc : 0) }'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); wrk runs of $duration; CLK_TCK $ticks"
for round in $(seq 1 "$rounds"); do
  for load in "${loads[@]}"; do
    read -r threads connections <<<"$load"
    label="round $round, wrk -t$threads -c$connections"
    if [ "$daemon_bin" != none ]; then
      run_side daemon "daemon:   "
      read -r -a d <<<"$result"
    fi
    run_side floor "floor:    "
    read -r -a f <<<"$result"
    [ "$daemon_bin" = none ] || ratios floor "${f[0]}" "${f[2]}"
    if [ "${REFERENCE:-0}" = 1 ]; then
      run_side reference "reference:"
      read -r -a r <<<"$result"
      [ "$daemon_bin" = none ] || ratios reference "${r[0]}" "${r[2]}"
    fi
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Runs every libFuzzer target (or the ones named) for SECONDS each, FUZZ_JOBS of them at a time
# (default: the number of cores), and fails on the first crash.
#   tools/fuzz.sh SECONDS [TARGET...]
# tools/test.sh runs it for a few seconds per target; the soak figures in fuzz/README.md come from
# `tools/fuzz.sh 600`. The targets must be built: cmake --build build/asan --target TARGET
# (FUZZ_BUILD names another build directory).
# fuzz/corpus/TARGET holds seeds and the inputs of crashes once found (regressions), read-only:
# new units go to a directory of the run's own. Each target's final stats are printed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:?usage: tools/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_record_batch fuzz_event_codec fuzz_http_request fuzz_line_framer fuzz_sse_parser
    fuzz_json_rpc fuzz_claude_stream fuzz_codex_rollout fuzz_stream_headers fuzz_item_ranges fuzz_unified_diff
    fuzz_search_query fuzz_ws_app fuzz_config_file fuzz_push_subscription fuzz_pairing)
fi

# fuzz_one TARGET: runs TARGET, prints its summary line, and fails (keeping its new units) on a
# crash.
fuzz_one() {
  local target=$1 log units seeds=()
  log=$(mktemp)
  units=$(mktemp -d)
  if [ -d "fuzz/corpus/$target" ]; then seeds=("fuzz/corpus/$target"); fi
  if ! "${FUZZ_BUILD:-build/asan}/fuzz/$target" -max_total_time="$seconds" -max_len=4096 \
       -print_final_stats=1 "$units" "${seeds[@]}" >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzzing $target found a failure (units kept in $units)"
    rm -f "$log"
    return 1
  fi
  local runs rss cov
  runs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
  rss=$(grep -m1 'stat::peak_rss_mb' "$log" | awk '{print $2}')
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1 || true)
  echo "$target: ${seconds} s, ${runs} runs, peak RSS ${rss} MB, ${cov:-no coverage line}, no failure"
  rm -rf "$log" "$units"
}

# FUZZ_JOBS targets at a time (default: one per core); each libFuzzer process is single-threaded.
jobs=${FUZZ_JOBS:-$(nproc)}
running=0 failed=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  [ "$failed" -eq 0 ] || break
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"

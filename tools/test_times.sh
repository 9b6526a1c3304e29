#!/usr/bin/env bash
# The slowest tests of the last ctest run in each build directory, and the sum of all test times
# per build, from Testing/Temporary/LastTest.log (where ctest writes every test's time). CI
# (tools/test.sh) prints it at its end, so that growth is visible.
#   tools/test_times.sh [-n N] BUILD_DIR...     (N: how many of the slowest; default 15)
set -euo pipefail
n=15
if [ "${1:-}" = -n ]; then
  n=$2
  shift 2
fi
[ $# -gt 0 ] || { echo "usage: $0 [-n N] BUILD_DIR..." >&2; exit 2; }
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for build in "$@"; do
  log="$build/Testing/Temporary/LastTest.log"
  [ -f "$log" ] || { echo "test_times: no $log (ctest has not run there)" >&2; continue; }
  # A test's section: "I/N Test: NAME", its output up to "<end of output>", then
  # "Test time =   S sec".
  awk -v build="$(basename "$build")" '
    /^[0-9]+\/[0-9]+ Test: / { name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); next }
    /^<end of output>$/ { ended = 1; next }
    ended && /^Test time = / { printf "%s\t%s\t%s\n", $4, build, name }
    { ended = 0 }
  ' "$log" >>"$times"
done
echo "slowest $n tests (seconds, build, test):"
# awk reads all of sort's output (no head): under pipefail, a reader that stops early would kill
# sort with SIGPIPE and fail the script.
sort -t$'\t' -k1,1gr "$times" |
  awk -F'\t' -v n="$n" 'NR <= n { printf "  %8.2f  %-6s %s\n", $1, $2, $3 }'
awk -F'\t' '{ sum[$2] += $1; count[$2]++ }
  END { for (b in sum) printf "sum of test times in %s: %.0f s over %d tests\n", b, sum[b], count[b] }' \
  "$times" | sort

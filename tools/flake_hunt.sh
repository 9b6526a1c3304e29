#!/usr/bin/env bash
# Hunts flaky tests in CI's own conditions: clones the current HEAD afresh (uncommitted changes
# are not in it), builds it as tools/test.sh does (the debug and the ASan + UBSan builds), starts a
# throw-away PostgreSQL cluster and sets AGENTSTREAM_TEST_PG as tools/test.sh does, then runs the
# whole suite N times in a row, each time the ASan build then the debug build with `ctest -j2`
# (CTEST_PARALLEL_LEVEL, default 2). Lint and fuzzing are not run: they are not tests.
#   tools/flake_hunt.sh [-n N] [-R REGEX] [-E REGEX] [-b BUILD] [-o DIR] [--keep-clone]
#     -n N          runs of the suite (default 10; each run is both builds)
#     -b BUILD      only this build, asan or debug (default: both; unlike CI, each runs every
#                   test, the GoogleTest binaries included, one source per compiler run)
#     -R / -E REGEX passed to ctest: only the tests that match / not those
#     -o DIR        where the report goes (default: a new flake-hunt-* directory under $TMPDIR)
#     --keep-clone  keeps the clone and its builds (default: removed at the end)
# Reports each failing test with the number of runs it failed in, and keeps the output of every
# failure in DIR/failures/RUN-BUILD/TEST.log (the test's section of ctest's LastTest.log; for the
# web tests also Playwright's test-results/ in DIR/failures/RUN-BUILD/web-test-results), with
# ctest's own console output in DIR/runs/RUN-BUILD.log. Exit status 1 when any test failed.
set -euo pipefail
runs=10
builds=(asan debug)
ctest_filter=()
out=""
keep_clone=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    -R | -E) ctest_filter+=("$1" "$2"); shift 2 ;;
    -b) builds=("$2"); shift 2 ;;
    -o) out=$2; shift 2 ;;
    --keep-clone) keep_clone=1; shift ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
head=$(git -C "$repo" rev-parse HEAD)
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/flake-hunt-XXXXXX")
mkdir -p "$out/runs" "$out/failures"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/flake-hunt-clone-XXXXXX")
# Beside the clone, not in it: as root the cluster runs as `postgres`, which may not enter $work.
pg_dir=$(mktemp -d "${TMPDIR:-/tmp}/agentstream-pg-XXXXXX")
cleanup() {
  if [ -d "$pg_dir/data" ]; then "$work/src/tools/pg_test_cluster.sh" stop "$pg_dir" 2>/dev/null || true; fi
  rm -rf "$pg_dir"
  if [ "$keep_clone" = 1 ]; then echo "flake hunt: the clone stays in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "flake hunt: note: the working tree has uncommitted changes; they are not tested"
fi
echo "flake hunt: $runs runs of $(git -C "$repo" log -1 --format='%h %s' "$head")"
echo "flake hunt: report in $out"
git clone --quiet --no-local "$repo" "$work/src"
git -C "$work/src" checkout --quiet --detach "$head"
cd "$work/src"

# As tools/test.sh: packages and the pinned npm trees. The npm trees of the checkout this runs
# from are copied when their lock file is the clone's (the same pinned packages, without asking
# the registry again); otherwise setup.sh installs them.
for tree in tests/peers tests/conformance web; do
  if [ -d "$repo/$tree/node_modules" ] && cmp -s "$repo/$tree/package-lock.json" "$tree/package-lock.json"; then
    cp -a "$repo/$tree/node_modules" "$tree/"
  fi
done
tools/setup.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-2}

# The configure options of tools/test.sh.
declare -A configure=([debug]="-DAGENTSTREAM_BUILD_TESTS=ON -DAGENTSTREAM_BUILD_BENCHMARKS=ON"
  [asan]="-DAGENTSTREAM_BUILD_TESTS=ON")
for build in "${builds[@]}"; do
  [ -n "${configure[$build]:-}" ] || { echo "flake hunt: no build $build (asan or debug)" >&2; exit 2; }
  echo "== build ($build)"
  start=$SECONDS
  # shellcheck disable=SC2086  # the options are words
  cmake --preset "$build" ${configure[$build]} >/dev/null
  cmake --build "build/$build" -j2 >"$out/build-$build.log" 2>&1 ||
    { tail -40 "$out/build-$build.log"; exit 1; }
  echo "built in $((SECONDS - start)) s"
done

echo "== PostgreSQL test cluster"
AGENTSTREAM_TEST_PG=$(cd "$pg_dir" && "$work/src/tools/pg_test_cluster.sh" start "$pg_dir")
export AGENTSTREAM_TEST_PG

# failure_sections LOG DIR NAME...: the sections of ctest's LastTest.log that belong to the tests
# NAME, each into DIR/NAME.log (characters other than letters, digits, . _ - made _).
failure_sections() {
  local log=$1 dir=$2
  shift 2
  awk -v names="$(printf '%s\n' "$@")" -v dir="$dir" '
    BEGIN { split(names, list, "\n"); for (i in list) want[list[i]] = 1 }
    /^[0-9]+\/[0-9]+ Testing: / {
      if (file != "") close(file)
      name = $0
      sub(/^[0-9]+\/[0-9]+ Testing: /, "", name)
      file = ""
      if (name in want) { file = name; gsub(/[^A-Za-z0-9._-]/, "_", file); file = dir "/" file ".log" }
    }
    file != "" { print > file }
  ' "$log"
}

declare -A failed_runs=()
total_failures=0
for run in $(seq 1 "$runs"); do
  for build in "${builds[@]}"; do
    tag="$run-$build"
    start=$SECONDS
    env=()
    [ "$build" = asan ] && env=(AGENTSTREAM_CRASH_CYCLES=10)  # as tools/test.sh
    status=0
    env "${env[@]}" ctest --test-dir "build/$build" --output-on-failure "${ctest_filter[@]}" \
      >"$out/runs/$tag.log" 2>&1 || status=$?
    summary=$(grep -E '^[0-9]+% tests passed' "$out/runs/$tag.log" || echo "ctest exited $status")
    echo "run $tag: $summary ($((SECONDS - start)) s)"
    [ "$status" -eq 0 ] && continue
    failed="build/$build/Testing/Temporary/LastTestsFailed.log"
    [ -f "$failed" ] || { echo "  ctest failed without a list of failed tests: see $out/runs/$tag.log"; continue; }
    mapfile -t names < <(cut -d: -f2- "$failed")
    mkdir -p "$out/failures/$tag"
    failure_sections "build/$build/Testing/Temporary/LastTest.log" "$out/failures/$tag" "${names[@]}"
    for name in "${names[@]}"; do
      echo "  FAILED $name"
      # The web tests' screenshots and page snapshots, which the next run would overwrite.
      if [ "$name" = web_test ] && [ -d web/test-results ]; then
        cp -r web/test-results "$out/failures/$tag/web-test-results"
      fi
      failed_runs["$build $name"]+="$run "
      total_failures=$((total_failures + 1))
    done
  done
done

echo
echo "== flake hunt: $runs runs of $(git log -1 --format=%h HEAD), report in $out"
if [ "$total_failures" -eq 0 ]; then
  echo "no test failed"
  exit 0
fi
echo "failing tests (runs failed / runs, build, test: the runs it failed in):"
for key in "${!failed_runs[@]}"; do
  read -ra which <<<"${failed_runs[$key]}"
  printf '  %d/%d  %s: runs %s\n' "${#which[@]}" "$runs" "$key" "${failed_runs[$key]% }"
done | sort -t/ -k1,1nr
echo "each failure's output: $out/failures/RUN-BUILD/TEST.log"
exit 1

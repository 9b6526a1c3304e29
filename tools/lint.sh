#!/usr/bin/env bash
# Checks formatting (.clang-format) and runs clang-tidy (.clang-tidy) over the project's sources.
# Usage: tools/lint.sh BUILD_DIR [--tidy-all] (BUILD_DIR: a configured build with
# compile_commands.json; --tidy-all: clang-tidy on every source, below).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/debug}
mapfile -t files < <(git ls-files '*.cc' '*.h')
clang-format --dry-run --Werror "${files[@]}"
echo "lint: formatting ok (${#files[@]} files)"
# src/core is pure (CONTRIBUTING.md): no source of it, tests aside, includes an I/O, thread, clock
# or randomness header.
impure=$(git ls-files 'src/core/*.cc' 'src/core/*.h' | grep -v '_test\.cc$' |
  xargs grep -nE '^#include <(fstream|iostream|istream|ostream|filesystem|cstdio|stdio\.h|thread|mutex|shared_mutex|condition_variable|future|atomic|chrono|ctime|random|unistd\.h|fcntl\.h|poll\.h|sys/[a-z_]+\.h|boost/(asio|beast|process)[^>]*|sodium\.h|sqlite3\.h|libpq-fe\.h)>' || true)
if [ -n "$impure" ]; then
  echo "lint: src/core must do no I/O, threads, clock or randomness:"
  echo "$impure"
  exit 1
fi
echo "lint: src/core includes no I/O, thread, clock or randomness header"
# The modules include each other only as the diagram of docs/architecture.md allows.
node tools/module_deps.mjs
# The HTTP API's OpenAPI description, with Redocly's recommended rules (tests/openapi/redocly.yaml).
if [ ! -x tests/openapi/node_modules/.bin/redocly ]; then
  echo "lint: tests/openapi/node_modules is missing; run tools/setup.sh (npm ci there)"
  exit 1
fi
# (The grep drops Redocly's banner about the Node.js version.)
(cd tests/openapi && node_modules/.bin/redocly lint --config redocly.yaml ../../docs/openapi.yaml \
  --format=summary 2>&1 | { grep -v '[║╔╚]' || true; }) ||
  { echo "lint: docs/openapi.yaml has errors"; exit 1; }
node tests/openapi/to_json.mjs --check
echo "lint: docs/openapi.yaml ok"
# tools/run.sh and tools/package.sh configure the release build without the tests and benchmarks
# (the tests' builds never do): a CMakeLists that names a test's target outside agentstream_test()
# stops them, and only a configure of that kind finds it.
bare=$(mktemp -d)
if ! cmake -S . -B "$bare" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAGENTSTREAM_BUILD_TESTS=OFF \
  -DAGENTSTREAM_BUILD_BENCHMARKS=OFF >"$bare/configure.log" 2>&1; then
  cat "$bare/configure.log"
  rm -rf "$bare"
  echo "lint: the build without tests (tools/run.sh, tools/package.sh) does not configure"
  exit 1
fi
rm -rf "$bare"
echo "lint: the build without tests configures"
# clang-tidy reads each source (tests aside) with the headers it includes. Reading all of them takes
# minutes, so by default it reads those changed since the last full run that passed, whose commit
# tools/tidy-base records, and those that include a changed header, directly or through other
# headers. It reads all of them with --tidy-all, when tools/tidy-base is missing or not an
# ancestor of HEAD, and when .clang-tidy changed. After a full run passes, record it:
#   git rev-parse HEAD > tools/tidy-base
mapfile -t all_sources < <(git ls-files 'src/*.cc' | grep -v '_test\.cc$')
base=$(cat tools/tidy-base 2>/dev/null || true)
tidy_all=$([ "${2:-}" = --tidy-all ] && echo yes || echo no)
if [ "$tidy_all" = no ] && { [ -z "$base" ] || ! git merge-base --is-ancestor "$base" HEAD 2>/dev/null ||
  ! git diff --quiet "$base" -- .clang-tidy; }; then
  echo "lint: tools/tidy-base is missing, not an ancestor of HEAD, or .clang-tidy changed: all files"
  tidy_all=yes
fi
if [ "$tidy_all" = yes ]; then
  sources=("${all_sources[@]}")
else
  # What changed since the base, committed or not.
  changed=$( (git diff --name-only "$base" -- 'src/*.cc' 'src/*.h'
    git ls-files --others --exclude-standard 'src/*.cc' 'src/*.h') | sort -u)
  # Every file that includes a changed header, until no new header is found.
  affected=$changed
  headers=$(grep '\.h$' <<<"$changed" || true)
  while [ -n "$headers" ]; do
    patterns=$(sed -E 's#^src/(.*)$#\#include "\1"#' <<<"$headers")
    includers=$(git ls-files 'src/*.cc' 'src/*.h' | xargs grep -lF -f <(echo "$patterns") || true)
    new=$(comm -13 <(echo "$affected" | sort -u) <(echo "$includers" | sort -u))
    affected=$(printf '%s\n%s\n' "$affected" "$new" | sed '/^$/d' | sort -u)
    headers=$(grep '\.h$' <<<"$new" || true)
  done
  mapfile -t sources < <(comm -12 <(printf '%s\n' "${all_sources[@]}" | sort) \
    <(echo "$affected" | sort -u))
  echo "lint: clang-tidy reads the ${#sources[@]} of ${#all_sources[@]} sources changed since" \
    "$(git rev-parse --short "$base") or including a changed header"
fi
# clang-tidy reads each file on its own (a unity build's sources split out of their unity files)
# and without the precompiled header (src/precompiled.h): a file that leans on the sources before
# it or on that header instead of including what it uses fails here, and clang cannot read g++'s
# image.
tidy_db=$(mktemp -d)
trap 'rm -rf "$tidy_db"' EXIT
node tools/unity_compile_db.mjs "$build/compile_commands.json" "$tidy_db/split.json"
sed -E 's# -Winvalid-pch -include [^ ]*cmake_pch\.hxx##g' "$tidy_db/split.json" \
  >"$tidy_db/compile_commands.json"
if [ ${#sources[@]} -gt 0 ]; then
  printf '%s\n' "${sources[@]}" | xargs -P 2 -n 4 clang-tidy -p "$tidy_db" --quiet 2>/dev/null
fi
echo "lint: clang-tidy ok (${#sources[@]} files)"

#!/usr/bin/env bash
# Checks formatting (.clang-format) and runs clang-tidy (.clang-tidy) over the project's sources.
# Usage: tools/lint.sh BUILD_DIR (a configured build with compile_commands.json).
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
mapfile -t sources < <(git ls-files 'src/*.cc' | grep -v '_test\.cc$')
# clang-tidy reads each file without the precompiled header (src/precompiled.h): a file that
# leans on it instead of including what it uses fails here, and clang cannot read g++'s image.
tidy_db=$(mktemp -d)
trap 'rm -rf "$tidy_db"' EXIT
sed -E 's# -Winvalid-pch -include [^ ]*cmake_pch\.hxx##g' "$build/compile_commands.json" \
  >"$tidy_db/compile_commands.json"
printf '%s\n' "${sources[@]}" | xargs -P 2 -n 4 clang-tidy -p "$tidy_db" --quiet 2>/dev/null
echo "lint: clang-tidy ok (${#sources[@]} files)"

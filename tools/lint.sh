#!/usr/bin/env bash
# Checks formatting (.clang-format) and runs clang-tidy (.clang-tidy) over the project's sources.
# Usage: tools/lint.sh BUILD_DIR (a configured build with compile_commands.json).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/debug}
mapfile -t files < <(git ls-files '*.cc' '*.h')
clang-format --dry-run --Werror "${files[@]}"
echo "lint: formatting ok (${#files[@]} files)"
mapfile -t sources < <(git ls-files 'src/*.cc' | grep -v '_test\.cc$')
printf '%s\n' "${sources[@]}" | xargs -P 2 -n 4 clang-tidy -p "$build" --quiet 2>/dev/null
echo "lint: clang-tidy ok (${#sources[@]} files)"

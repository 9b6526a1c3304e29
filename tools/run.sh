#!/usr/bin/env bash
# Builds agentstream (release) and plays a scripted agent session into the embedded SQLite log,
# printing every event as it commits. Extra arguments go to `agentstream demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cmake --preset release -DAGENTSTREAM_BUILD_TESTS=OFF -DAGENTSTREAM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/release --target agentstream
exec build/release/src/cli/agentstream demo "$@"

#!/usr/bin/env bash
# Builds the Debian package of agentstream: the release build (tests and benchmarks off), the
# web page (web/dist), then CPack's .deb in build/package/. Install it with
#   sudo apt install ./build/package/agentstream_VERSION_amd64.deb
# (apt pulls the libraries it depends on). docs/operations.md, "Install", says what it contains.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh >/dev/null
cmake --preset release -B build/package -DAGENTSTREAM_BUILD_TESTS=OFF \
  -DAGENTSTREAM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/package --target agentstream
(cd web && npm run --silent build >/dev/null)
(cd build/package && cpack -G DEB)
ls build/package/agentstream_*.deb

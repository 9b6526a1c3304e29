// The headers nearly every translation unit parses: the standard library's containers, fmt and
// Boost.JSON. CMake precompiles them once per build (CMakeLists.txt,
// AGENTSTREAM_PRECOMPILED_HEADERS) and every target reuses that one image, which takes about 40%
// off each compilation (docs/benchmarks.md, "Build"). Nothing may rely on it: each file still
// includes what it uses, and tools/lint.sh checks every file without it. Asio stays out: its
// headers define objects at namespace scope that would need its compiled sources
// (agentstream_net) in every program.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <boost/json.hpp>

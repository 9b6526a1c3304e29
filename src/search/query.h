// The search query as a person types it (`q=` of GET /v1/search, the WebSocket `search`
// message): the words a SearchQuery (store/search_index.h) is made of. Pure, no I/O; fuzzed
// with the SQLite store's MATCH expression (fuzz/fuzz_search_query.cc).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream {

// Words a query may hold, at most, and its length in bytes.
inline constexpr std::size_t kMaxQueryWords = 16;
inline constexpr std::size_t kMaxQueryBytes = 1024;

// The words of a query as a person types it: split at spaces and punctuation, at most
// kMaxQueryWords (further words are ignored). kInvalidArgument for a query that is not UTF-8,
// longer than kMaxQueryBytes or without a word. Thread-safe (no state).
Result<std::vector<std::string>> QueryWords(std::string_view text);

}  // namespace agentstream

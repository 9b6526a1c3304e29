// Sequence numbers, epochs and offsets are unsigned 64-bit counters; SQLite and PostgreSQL keep
// them in signed 64-bit columns. Every value the daemon writes is below 2^63, so the cast keeps it.
#pragma once

#include <cstdint>

namespace agentstream {

inline std::int64_t I64(std::uint64_t v) { return static_cast<std::int64_t>(v); }

}  // namespace agentstream

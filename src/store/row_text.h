// Internal to the store module: the check of text a store row keeps, shared by the row checks of
// the stores beside the log (device_rows.h, schedule_rows.h), so that every backend refuses the
// same text the same way: PostgreSQL's text holds neither NUL bytes nor ill-formed UTF-8, and
// SQLite and the memory log refuse what it refuses.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"

namespace agentstream::store_internal {

// OK when `text` is `min_bytes` to `max_bytes` bytes of UTF-8 without NUL bytes; otherwise
// kInvalidArgument naming `what` ("a device name").
Status CheckRowText(const std::string& what, const std::string& text, std::size_t min_bytes,
                    std::size_t max_bytes);

}  // namespace agentstream::store_internal

// Reading a whole small file that something outside the daemon wrote (a configuration file, a
// catalog): never more than a bound, so a huge file or an endless device such as /dev/zero is
// refused instead of read into memory.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"

namespace agentstream::system {

// The bytes of the file at `path`, reading at most `max_bytes` + 1 of them. kTooLarge when it
// holds more than `max_bytes`; kIoError with the system's reason when it cannot be opened or read.
Result<std::string> ReadBoundedFile(const std::string& path, std::size_t max_bytes);

}  // namespace agentstream::system

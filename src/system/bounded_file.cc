#include "system/bounded_file.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace agentstream::system {

Result<std::string> ReadBoundedFile(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return Error(ErrorCode::kIoError, std::strerror(errno));
  std::string text;
  std::array<char, std::size_t{64} << 10> chunk{};
  while (text.size() <= max_bytes && in) {
    const std::size_t want = std::min(chunk.size(), max_bytes + 1 - text.size());
    in.read(chunk.data(), static_cast<std::streamsize>(want));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return Error(ErrorCode::kIoError, "read error");
  if (text.size() > max_bytes)
    return Error(ErrorCode::kTooLarge, "larger than " + std::to_string(max_bytes) + " bytes");
  return text;
}

}  // namespace agentstream::system

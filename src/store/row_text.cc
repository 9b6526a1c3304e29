#include "store/row_text.h"

#include "core/utf8.h"

namespace agentstream::store_internal {

Status CheckRowText(const std::string& what, const std::string& text, std::size_t min_bytes,
                    std::size_t max_bytes) {
  if (text.size() < min_bytes || text.size() > max_bytes)
    return Error(ErrorCode::kInvalidArgument, what + " must be " + std::to_string(min_bytes) +
                                                  " to " + std::to_string(max_bytes) + " bytes");
  if (text.find('\0') != std::string::npos || !IsValidUtf8(text))
    return Error(ErrorCode::kInvalidArgument, what + " must be UTF-8 text without NUL bytes");
  return Status::Ok();
}

}  // namespace agentstream::store_internal

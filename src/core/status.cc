#include "core/status.h"

#include <string>

namespace agentstream {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kAlreadyExists:
      return "already_exists";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kFenced:
      return "fenced";
    case ErrorCode::kSequenceGap:
      return "sequence_gap";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kCorruption:
      return "corruption";
    case ErrorCode::kUnsupportedVersion:
      return "unsupported_version";
    case ErrorCode::kIoError:
      return "io_error";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kMisdirected:
      return "misdirected";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out(ErrorCodeName(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace agentstream

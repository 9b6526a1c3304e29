// Status and Result<T>: errors as values at every module boundary.
//
// A Status is either OK or carries a code from a small closed set and a message meant for a
// person. Result<T> holds a value or a non-OK Status. Both are [[nodiscard]]: an ignored error is
// a compile warning. Exceptions never cross a module boundary; third-party exceptions are caught
// at the edge and turned into a Status.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace agentstream {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is malformed (bad payload, bad cursor, ...)
  kNotFound,            // the named session, epoch or consumer does not exist
  kAlreadyExists,       // creating something that exists
  kConflict,            // an expected seq did not match the log's tail
  kFenced,              // a stale producer epoch or lease generation was refused
  kSequenceGap,         // a producer skipped a sequence number
  kTooLarge,            // an event or batch exceeds a configured limit
  kCorruption,          // stored bytes do not decode; nothing was changed
  kUnsupportedVersion,  // stored bytes use a newer format than this build reads
  kIoError,             // the storage layer failed; the outcome of the write is unknown
  kUnavailable,         // the log refuses writes after an earlier failure, or is closed
  kResourceExhausted,   // a bounded queue is full
  kUnauthenticated,     // a credential (token, signature) is missing, stale or wrong
  kMisdirected,         // asked of the wrong server: another daemon runs the agent
  kInternal,            // a bug: an invariant of this program did not hold (keep last)
};

std::string_view ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "Conflict: expected tail 4, log is at 5".
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status Error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

// Holds a T or an error Status. Accessing value() of an error is a programmer error.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : state_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(state_).ok() && "a Result holding a Status must hold an error");
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace agentstream

// Returns early with the Status of an expression that yields a non-OK Status.
#define AS_RETURN_IF_ERROR(expr)               \
  do {                                         \
    ::agentstream::Status as_status_ = (expr); \
    if (!as_status_.ok()) return as_status_;   \
  } while (false)

#define AS_CONCAT_INNER(a, b) a##b
#define AS_CONCAT(a, b) AS_CONCAT_INNER(a, b)
// Declares `lhs` from a Result, or returns its error Status.
#define AS_ASSIGN_OR_RETURN(lhs, expr) \
  AS_ASSIGN_OR_RETURN_IMPL(AS_CONCAT(as_result_, __LINE__), lhs, expr)
// NOLINTBEGIN(bugprone-macro-parentheses): `lhs` is a declaration.
#define AS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

// Strong id types. A SessionId cannot be passed where a TurnId is expected, and a Seq cannot be
// confused with an Epoch. They are plain values: cheap to copy, comparable, hashable.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace agentstream {

// A string identifier tagged with the kind of thing it names.
template <class Tag>
class StringId {
 public:
  StringId() = default;
  explicit StringId(std::string value) : value_(std::move(value)) {}

  const std::string& str() const { return value_; }
  bool empty() const { return value_.empty(); }

  friend auto operator<=>(const StringId&, const StringId&) = default;

 private:
  std::string value_;
};

// An integer counter tagged with what it counts.
template <class Tag>
class Counter {
 public:
  constexpr Counter() = default;
  constexpr explicit Counter(std::uint64_t value) : value_(value) {}

  constexpr std::uint64_t value() const { return value_; }
  constexpr Counter next() const { return Counter(value_ + 1); }

  friend constexpr auto operator<=>(Counter, Counter) = default;

 private:
  std::uint64_t value_ = 0;
};

struct SessionIdTag {};
struct TurnIdTag {};
struct MessageIdTag {};
struct ToolCallIdTag {};
struct RequestIdTag {};
struct ProducerIdTag {};
struct ConsumerIdTag {};
struct SeqTag {};
struct EpochTag {};

using SessionId = StringId<SessionIdTag>;    // an agent session ("ses_...")
using TurnId = StringId<TurnIdTag>;          // a turn, assigned by the daemon ("turn_...")
using MessageId = StringId<MessageIdTag>;    // a user or assistant message
using ToolCallId = StringId<ToolCallIdTag>;  // one tool call of a provider
using RequestId = StringId<RequestIdTag>;    // a permission or authorization request
using ProducerId = StringId<ProducerIdTag>;  // an idempotent producer writing to a log
using ConsumerId = StringId<ConsumerIdTag>;  // a durable consumer reading logs

// Position of an event in one epoch of a session log. Dense, starting at 1; 0 means "before the
// first event" (the tail of an empty log).
using Seq = Counter<SeqTag>;
// A version of a session's history. Starts at 1; a rewind creates the next epoch.
using Epoch = Counter<EpochTag>;

// An address in a session's history: everything a client holds is addressed by cursors.
struct Cursor {
  Epoch epoch;
  Seq seq;
  friend auto operator<=>(const Cursor&, const Cursor&) = default;
};

// Where a history begins: the prefix [1, seq] of another (session, epoch). A fork's origin, as
// the log stores it (SessionInfo::forked_from) and as clients see it (AgentSnapshot::forked_from).
struct HistoryBase {
  SessionId session;
  Epoch epoch;
  Seq seq;
  friend bool operator==(const HistoryBase&, const HistoryBase&) = default;
};

// "EPOCH:SEQ", the text form used in URLs and on the command line.
std::string FormatCursor(Cursor cursor);
// The cursor as a Durable Streams offset: "EEEEEEEEEEEEEEEE_SSSSSSSSSSSSSSSS" (16 zero-padded
// digits each), so offsets compare as strings the way their cursors compare.
std::string FormatStreamOffset(Cursor cursor);
// Parses "EPOCH:SEQ" or a stream offset "EPOCH_SEQ"; false on anything else (no partial parses,
// no signs, no overflow).
bool ParseCursor(std::string_view text, Cursor* out);

}  // namespace agentstream

template <class Tag>
struct std::hash<agentstream::StringId<Tag>> {
  size_t operator()(const agentstream::StringId<Tag>& id) const noexcept {
    return std::hash<std::string>{}(id.str());
  }
};

template <class Tag>
struct std::hash<agentstream::Counter<Tag>> {
  size_t operator()(agentstream::Counter<Tag> c) const noexcept {
    return std::hash<std::uint64_t>{}(c.value());
  }
};

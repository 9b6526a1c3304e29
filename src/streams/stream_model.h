// The in-memory model of one generic stream, shared by the store and its journal.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "streams/offset.h"

namespace agentstream::streams {

// The last accepted append of one idempotent producer.
struct ProducerState {
  std::uint64_t epoch = 0;
  std::uint64_t last_seq = 0;
  std::int64_t updated_ms = 0;
};

// The producer append that closed a stream: a retry of it is a duplicate, not a conflict.
struct ClosedBy {
  std::string producer;
  std::uint64_t epoch = 0;
  std::uint64_t seq = 0;
};

struct Message {
  Offset offset;  // the stream's tail after this message
  std::shared_ptr<const std::string> data;
};

struct StreamMeta {
  std::int64_t id = 0;  // row id in the journal
  std::string path;
  std::string content_type;  // as given at creation (or inherited by a fork)
  std::optional<std::int64_t> ttl_seconds;
  std::optional<std::string> expires_at;  // as given, compared byte-wise on re-create
  std::int64_t expires_at_ms = 0;         // parsed expires_at; 0 when absent
  std::int64_t created_ms = 0;
  bool closed = false;
  std::optional<ClosedBy> closed_by;
  std::optional<std::string> forked_from;
  Offset fork_offset;
  std::uint64_t fork_sub_offset = 0;
  bool soft_deleted = false;  // deleted or expired while forks still read through it
  std::optional<std::string> last_stream_seq;  // Stream-Seq, compared byte-wise
  std::map<std::string, ProducerState> producers;
};

struct Stream {
  StreamMeta meta;
  std::vector<Message> messages;  // own messages, offsets ascending
  Offset tail;                    // next offset (fork point for an empty fork)
  std::int64_t last_access_ms = 0;
  int ref_count = 0;  // forks reading through this stream
  std::size_t bytes = 0;
};

}  // namespace agentstream::streams

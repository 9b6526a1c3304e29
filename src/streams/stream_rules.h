// The protocol's rules for one stream, as pure functions over its state: whether a re-create
// matches, what a new stream (or fork) starts with, and what an append may do (closing, content
// type, Stream-Seq, idempotent producers, JSON mode). Both stores (memory_stream_store.h,
// postgres_streams.h) decide with these and differ only in where the state lives, so a stream
// behaves the same on either.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "streams/stream_model.h"
#include "streams/stream_store.h"

namespace agentstream::streams {

bool IsJsonType(const std::string& content_type);

// True when a PUT with `args` re-confirms the existing stream `meta` (200), false for 409.
bool SameConfig(const CreateArgs& args, const StreamMeta& meta);

// A fork's source as the store sees it.
struct ForkSource {
  const StreamMeta* meta = nullptr;
  Offset tail;
  // The first message after `offset` (of the source, read through its own sources), or nullopt.
  std::function<std::optional<std::string>(Offset offset)> first_after;
};

// True when a create's Stream-Expires-At is at or before `now_ms` (the store's clock): such a
// stream would be expired when made, so the create is refused (kExpiresInPast, 400).
bool ExpiresBeforeCreation(const CreateArgs& args, std::int64_t now_ms);

// What a new stream starts with.
struct NewStream {
  Code code = Code::kCreated;  // or the refusal
  StreamMeta meta;             // id, created_ms and closed left to the caller
  Offset tail;                 // the fork offset, or zero
  std::string prefix;          // a fork's part of the message at its sub-offset ("" for none)
  std::string initial;         // the initial body in stored form ("" for none)
};

// The new stream of `args` (`source` for a fork, checked by the caller to exist and be live).
NewStream PlanCreate(const CreateArgs& args, const ForkSource* source);

// What an append to a stream whose state is `meta` and `tail` does.
struct AppendPlan {
  OpResult result;                  // result.code: kOk or the refusal
  std::optional<std::string> data;  // the message to add, in stored form (none: close only)
  bool idempotent_close = false;    // closing an already closed stream: nothing changes
  bool changes_meta = false;        // producer, Stream-Seq or closing changes the metadata
};

// Producer states idle for longer than limits.producer_state_ttl_ms are treated as absent.
// `live_producers`: how many live producer states the stream has, when `meta.producers` holds
// only some of them (else they are counted there).
AppendPlan PlanAppend(const StreamMeta& meta, const AppendArgs& args, std::int64_t now_ms,
                      const StreamLimits& limits,
                      std::optional<std::size_t> live_producers = std::nullopt);
// True when `producer` has no live state in `meta.producers`.
bool NewProducer(const StreamMeta& meta, const std::string& producer, std::int64_t now_ms,
                 const StreamLimits& limits);

// Applies an accepted plan's metadata changes (producer state, Stream-Seq, closing) to `meta`,
// dropping idle producer states.
void ApplyAppend(StreamMeta& meta, const AppendArgs& args, std::int64_t now_ms,
                 const StreamLimits& limits);

// True once a stream with `meta` and the last access `last_access_ms` has expired at `now_ms`.
bool Expired(const StreamMeta& meta, std::int64_t last_access_ms, std::int64_t now_ms);

StreamInfo InfoOf(const StreamMeta& meta, Offset tail);

}  // namespace agentstream::streams

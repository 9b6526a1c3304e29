// Internal to the protocol layer (stream_protocol.h): what its files share. stream_protocol.cc
// routes a request by method to the handlers of stream_protocol_write.cc (PUT, POST, DELETE) and
// stream_protocol_read.cc (GET, HEAD, long-poll); stream_protocol_sse.cc steps SSE reads;
// stream_protocol_request.cc reads and checks what a client sent; stream_protocol_response.cc
// builds the answers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "streams/stream_protocol.h"
#include "streams/stream_store.h"

namespace agentstream::streams::protocol_internal {

// Answers a request; called once (HandleStreamRequest's `done`).
using Done = std::function<void(Outcome)>;

// stream_protocol_request.cc: pure checks of a request's query and header values.

// Every value of `key` in a raw query string, percent-decoded, in order.
std::vector<std::string> QueryValues(std::string_view query, std::string_view key);
// True for one or more ASCII digits.
bool AllDigits(std::string_view s);
// "0" or up to 15 digits without a leading zero.
bool CanonicalInteger(std::string_view s);
// Digits that make an integer no larger than 2^53 - 1 (as clients parse it); nullopt otherwise.
std::optional<std::uint64_t> SafeInteger(std::string_view s);
// A content type that starts "type/subtype" (^[\w-]+/[\w-]+, as other servers check it).
bool ValidContentType(std::string_view content_type);

// stream_protocol_response.cc: building an answer.

// A response with a text/plain body.
StreamResponse Text(int status, std::string body);
// The error response of a store's result code.
StreamResponse FromCode(Code code);
// Adds the header `name: value`.
void Set(StreamResponse* response, std::string name, std::string value);
// Answers `response` through `done` once everything changed so far is durable, or 500 when the
// store's commit failed. Takes `done` over.
void AfterDurable(StreamStore& store, StreamResponse response, Done& done);

// stream_protocol_write.cc: the writes. Each takes `done` over and calls it once (for changes,
// from the journal's thread once they are durable).
void HandleCreate(StreamStore& store, const StreamRequest& request, const std::string& base_url,
                  Done& done);
void HandleAppend(StreamStore& store, const StreamRequest& request, Done& done);
void HandleDelete(StreamStore& store, const StreamRequest& request, Done& done);

// stream_protocol_read.cc: the reads. Each calls `done` once, before it returns; a read that
// must wait answers a LiveRead.
void HandleRead(StreamStore& store, const StreamRequest& request, Done& done);
void HandleHead(StreamStore& store, const StreamRequest& request, Done& done);

}  // namespace agentstream::streams::protocol_internal

// Internal to the consumers module: the built-in sinks (docs/consumers.md).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "consumers/consumer_service.h"
#include "consumers/signature.h"
#include "consumers/sink.h"

namespace agentstream::consumers {

// The sink `spec.sink` names; `notify` builds a notify sink (empty: refused). kInvalidArgument
// for a bad sink definition.
Result<std::unique_ptr<Sink>> MakeSink(const ConsumerSpec& spec, const ParentAppender& parent,
                                       const SinkFactory& notify);

std::unique_ptr<Sink> MakeWebhookSink(const SinkSpec& spec);
std::unique_ptr<Sink> MakeCommandSink(const SinkSpec& spec);
std::unique_ptr<Sink> MakeJsonlSink(const SinkSpec& spec);

// The sink's new adapter state from a reply body: the value of "state" when the body is a JSON
// object holding one, else nullopt (the stored state stays).
std::optional<boost::json::value> StateFromReply(std::string_view body);

}  // namespace agentstream::consumers

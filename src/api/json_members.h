// Strict JSON objects: the one check that an object a client sent holds no member its reader
// does not know. The request decoders of api_json.h (HTTP bodies and WebSocket messages) use it;
// it fits any other reader of client JSON (the MCP server's tool arguments). Pure; thread-safe.
#pragma once

#include <boost/json/object.hpp>
#include <span>
#include <string_view>

#include "core/status.h"

namespace agentstream::api {

// The member names a reader accepts.
using MemberNames = std::span<const std::string_view>;

// OK when every member of `object` is named in `known` or in `envelope`. Else kInvalidArgument
// naming the first other member and `what` holds it, with the known names:
//   unknown field "worktre" in the agent config (known: provider, cwd, ...)
// `envelope` is what a transport puts beside a body's own members (the WebSocket's "type" and
// "id"); its names are accepted but not listed. A quoted name is cut to 64 bytes.
Status RefuseUnknownMembers(const boost::json::object& object, MemberNames known,
                            std::string_view what, MemberNames envelope = {});

}  // namespace agentstream::api

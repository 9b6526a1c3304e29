// CheckEvent: every text a provider event carries is valid UTF-8, whichever fields the event type
// has (the parsers of agent output promise it: invalid bytes are repaired or refused). Shared by
// the fuzz targets of those parsers.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "core/ids.h"
#include "core/turn/provider_event.h"
#include "core/utf8.h"
#include "fuzz_check.h"

namespace agentstream::fuzzing {

namespace json = boost::json;

inline void CheckText(const std::string& s) { Check(IsValidUtf8(s)); }
template <class Tag>
inline void CheckText(const StringId<Tag>& id) {
  CheckText(id.str());
}
inline void CheckText(const json::value& v) {
  if (v.is_string()) {
    Check(IsValidUtf8(std::string_view(v.as_string().data(), v.as_string().size())));
  } else if (v.is_array()) {
    for (const json::value& e : v.as_array()) CheckText(e);
  } else if (v.is_object()) {
    for (const auto& kv : v.as_object()) {
      Check(IsValidUtf8(std::string_view(kv.key().data(), kv.key().size())));
      CheckText(kv.value());
    }
  }
}
template <class T>
requires std::is_enum_v<T>
inline void CheckText(T) {}  // ToolCallStatus and the like: no text
template <class T>
inline void CheckText(const std::optional<T>& v) {
  if (v) CheckText(*v);
}

// Every text field of a provider event, whichever of them the event type has.
inline void CheckEvent(const turn::ProviderEvent& event) {
  std::visit(
      [](const auto& e) {
        if constexpr (requires { e.message_id; }) CheckText(e.message_id);
        if constexpr (requires { e.parent_message_id; }) CheckText(e.parent_message_id);
        if constexpr (requires { e.client_message_id; }) CheckText(e.client_message_id);
        if constexpr (requires { e.call_id; }) CheckText(e.call_id);
        if constexpr (requires { e.request_id; }) CheckText(e.request_id);
        if constexpr (requires { e.task_id; }) CheckText(e.task_id);
        if constexpr (requires { e.text; }) CheckText(e.text);
        if constexpr (requires { e.name; }) CheckText(e.name);
        if constexpr (requires { e.title; }) CheckText(e.title);
        if constexpr (requires { e.tool_name; }) CheckText(e.tool_name);
        if constexpr (requires { e.input; }) CheckText(e.input);
        if constexpr (requires { e.output; }) CheckText(e.output);
        if constexpr (requires { e.error; }) CheckText(e.error);
        if constexpr (requires { e.stop_reason; }) CheckText(e.stop_reason);
        if constexpr (requires { e.error_code; }) CheckText(e.error_code);
        if constexpr (requires { e.message; }) CheckText(e.message);
        if constexpr (requires { e.code; }) CheckText(e.code);
        if constexpr (requires { e.type; }) CheckText(e.type);
        if constexpr (requires { e.data; }) CheckText(e.data);
        if constexpr (requires { e.description; }) CheckText(e.description);
        if constexpr (requires { e.summary; }) CheckText(e.summary);
        if constexpr (requires { e.status; }) CheckText(e.status);
        if constexpr (requires { e.mode; }) CheckText(e.mode);
        if constexpr (requires { e.model; }) CheckText(e.model);
      },
      event);
}

}  // namespace agentstream::fuzzing

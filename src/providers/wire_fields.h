// Lenient field access for the JSON that agent CLIs send: a missing or mistyped field reads as
// empty, zero or false. Provider output is data to map, never a reason to fail; the mappers
// decide what an empty field means.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_hygiene.h"

namespace agentstream::providers::wire {

inline std::string Str(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

inline const boost::json::object* Obj(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->as_object() : nullptr;
}

inline std::int64_t Int(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  if (v && v->is_int64()) return v->as_int64();
  if (v && v->is_uint64()) return static_cast<std::int64_t>(v->as_uint64());
  return 0;
}

inline bool Bool(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  return v && v->is_bool() && v->as_bool();
}

// NullNonFinite (core/json_hygiene.h): call it on every value parsed from a provider's output.
using ::agentstream::NullNonFinite;

}  // namespace agentstream::providers::wire

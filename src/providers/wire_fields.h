// Lenient field access for the JSON that agent CLIs send: a missing or mistyped field reads as
// empty, zero or false. Provider output is data to map, never a reason to fail; the mappers
// decide what an empty field means.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

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

// Replaces every number the parser read as infinite (a literal beyond the range of a double, such
// as 1e999) with null, as JavaScript's JSON.stringify does. Boost.JSON writes an infinite number
// back as "Infinity", which is not JSON: the log would refuse the event that carries it. Call it
// on every value parsed from a provider's output.
inline void NullNonFinite(boost::json::value& v) {
  if (v.is_double()) {
    if (!std::isfinite(v.get_double())) v = nullptr;
  } else if (v.is_array()) {
    for (boost::json::value& e : v.get_array()) NullNonFinite(e);
  } else if (v.is_object()) {
    for (auto& kv : v.get_object()) NullNonFinite(kv.value());
  }
}

}  // namespace agentstream::providers::wire

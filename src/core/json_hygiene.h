// Hygiene for JSON values parsed from another process (an agent CLI, an editor): what Boost.JSON
// accepts but cannot write back as JSON. Pure, header-only.
#pragma once

#include <boost/json/value.hpp>
#include <cmath>

namespace agentstream {

// Replaces every number the parser read as infinite (a literal beyond the range of a double, such
// as 1e999) with null, as JavaScript's JSON.stringify does. Boost.JSON writes an infinite number
// back as "Infinity", which is not JSON: the log would refuse the event that carries it, and a
// JSON-RPC peer the reply that echoes it. Call it on every value parsed from another process.
inline void NullNonFinite(boost::json::value& v) {
  if (v.is_double()) {
    if (!std::isfinite(v.get_double())) v = nullptr;
  } else if (v.is_array()) {
    for (boost::json::value& e : v.get_array()) NullNonFinite(e);
  } else if (v.is_object()) {
    for (auto& kv : v.get_object()) NullNonFinite(kv.value());
  }
}

}  // namespace agentstream

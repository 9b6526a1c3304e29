// SameJson: equality of two JSON values for round-trip checks of the fuzz targets. Doubles may
// differ by a few units in the last place: Boost.JSON 1.81 parses some decimal numbers to a
// neighbour of the nearest double, so serialize-then-parse of a double is not always exact.
#pragma once

#include <boost/json/value.hpp>
#include <cmath>

namespace agentstream::fuzz {

inline bool SameJson(const boost::json::value& a, const boost::json::value& b) {
  if (a.is_double() && b.is_double()) {
    const double x = a.get_double(), y = b.get_double();
    return x == y || std::fabs(x - y) <= 1e-14 * std::fmax(std::fabs(x), std::fabs(y));
  }
  if (a.is_array() && b.is_array()) {
    const boost::json::array &p = a.get_array(), &q = b.get_array();
    if (p.size() != q.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (!SameJson(p[i], q[i])) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    const boost::json::object &p = a.get_object(), &q = b.get_object();
    if (p.size() != q.size()) return false;
    for (const auto& kv : p) {
      const boost::json::value* other = q.if_contains(kv.key());
      if (other == nullptr || !SameJson(kv.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace agentstream::fuzz

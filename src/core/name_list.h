// The names an error message lists: "a, b, c and 4 more". Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace agentstream {

// The first `at_most` names joined with ", ", then " and N more" for the rest.
inline std::string NameList(const std::vector<std::string>& names, std::size_t at_most) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < at_most; ++i)
    out += (i > 0 ? ", " : "") + names[i];
  if (names.size() > at_most) out += " and " + std::to_string(names.size() - at_most) + " more";
  return out;
}

}  // namespace agentstream

// Stream patterns of subscriptions (subscriptions.h): "*" matches one path segment, "**" any
// number of them.
#include <functional>
#include <string_view>
#include <vector>

#include "streams/subscriptions.h"

namespace agentstream::streams {

bool GlobMatch(std::string_view pattern, std::string_view path) {
  auto split = [](std::string_view s) {
    std::vector<std::string_view> parts;
    while (!s.empty()) {
      const std::size_t slash = s.find('/');
      if (slash != 0) parts.push_back(s.substr(0, slash));
      if (slash == std::string_view::npos) break;
      s.remove_prefix(slash + 1);
    }
    return parts;
  };
  const auto p = split(pattern), s = split(path);
  std::function<bool(std::size_t, std::size_t)> match = [&](std::size_t pi, std::size_t si) {
    while (pi < p.size() && si < s.size()) {
      if (p[pi] == "**") {
        for (std::size_t i = si; i <= s.size(); ++i)
          if (match(pi + 1, i)) return true;
        return false;
      }
      if (p[pi] != "*" && p[pi] != s[si]) return false;
      ++pi;
      ++si;
    }
    while (pi < p.size() && p[pi] == "**") ++pi;
    return pi == p.size() && si == s.size();
  };
  return match(0, 0);
}

}  // namespace agentstream::streams

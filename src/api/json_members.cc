#include "api/json_members.h"

#include <algorithm>
#include <string>

#include "core/utf8.h"

namespace agentstream::api {

namespace {

constexpr std::size_t kMaxQuotedName = 64;

bool Among(MemberNames names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Status RefuseUnknownMembers(const boost::json::object& object, MemberNames known,
                            std::string_view what, MemberNames envelope) {
  for (const auto& member : object) {
    const std::string_view name = member.key();
    if (Among(known, name) || Among(envelope, name)) continue;
    const BoundedText quoted = BoundUtf8(name, kMaxQuotedName);
    std::string list;
    for (const std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return Error(ErrorCode::kInvalidArgument,
                 "unknown field \"" + quoted.text + (quoted.truncated ? "...\"" : "\"") + " in " +
                     std::string(what) + " (known: " + (list.empty() ? "none" : list) + ")");
  }
  return Status::Ok();
}

}  // namespace agentstream::api

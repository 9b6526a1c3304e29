#include "workspace/refs.h"

#include <string>

namespace agentstream::workspace {

namespace {

// The reason `component` (one part of a ref name between slashes) is refused, or empty.
std::string_view ComponentFault(std::string_view component) {
  if (component.empty()) return "has an empty component (\"//\", or a leading or trailing '/')";
  if (component.front() == '.') return "has a component starting with '.'";
  if (component.size() >= 5 && component.substr(component.size() - 5) == ".lock")
    return "has a component ending with \".lock\"";
  if (component.size() > kMaxRefComponentBytes) return "has a component over 250 bytes";
  return {};
}

// The reason `name` breaks git's rules for ref names (`git check-ref-format`), or empty.
std::string_view RefFault(std::string_view name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxRefBytes) return "is longer than 255 bytes";
  if (name == "@") return "is \"@\", which git reads as HEAD";
  if (name.back() == '.') return "ends with '.'";
  if (name.find("..") != std::string_view::npos) return "contains \"..\"";
  if (name.find("@{") != std::string_view::npos) return "contains \"@{\"";
  for (const char c : name) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) return "contains a control character";
    if (std::string_view(" ~^:?*[\\").find(c) != std::string_view::npos)
      return "contains one of ' ', '~', '^', ':', '?', '*', '[' or '\\'";
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t end = name.find('/', start);
    const std::string_view fault = ComponentFault(name.substr(start, end - start));
    if (!fault.empty()) return fault;
    if (end == std::string_view::npos) return {};
    start = end + 1;
  }
}

Status Refused(std::string_view what, std::string_view name, std::string_view fault) {
  std::string shown(name.substr(0, 80));
  if (name.size() > 80) shown += "...";
  return Error(ErrorCode::kInvalidArgument, std::string(what) + " \"" + shown +
                                                "\" is not a valid name: it " + std::string(fault));
}

}  // namespace

Status CheckBranchName(std::string_view name) {
  if (!name.empty() && name.front() == '-') return Refused("branch", name, "starts with '-'");
  if (name == "HEAD") return Refused("branch", name, "is \"HEAD\"");
  if (name.substr(0, 5) == "refs/")
    return Refused("branch", name, "starts with \"refs/\" (give the name without it)");
  if (IsFullObjectId(name)) return Refused("branch", name, "is a full object id");
  const std::string_view fault = RefFault(name);
  if (!fault.empty()) return Refused("branch", name, fault);
  return Status::Ok();
}

Status CheckFullRefName(std::string_view name) {
  if (name.substr(0, 5) != "refs/") return Refused("ref", name, "does not start with \"refs/\"");
  const std::string_view fault = RefFault(name);
  if (!fault.empty()) return Refused("ref", name, fault);
  return Status::Ok();
}

bool IsFullObjectId(std::string_view text) {
  if (text.size() != 40 && text.size() != 64) return false;
  for (const char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Result<std::string> ExactRef(std::string_view what, std::string_view ref) {
  if (ref == "HEAD" || IsFullObjectId(ref)) return std::string(ref);
  if (ref.substr(0, 5) == "refs/") {
    const std::string_view fault = RefFault(ref);
    if (!fault.empty()) return Refused(what, ref, fault);
    return std::string(ref);
  }
  if (Status branch = CheckBranchName(ref); !branch.ok())
    return Refused(what, ref,
                   "is neither HEAD, a full commit id, a full ref (refs/...) nor a branch name");
  return "refs/heads/" + std::string(ref);
}

}  // namespace agentstream::workspace

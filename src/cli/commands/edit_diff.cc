#include "cli/commands/edit_diff.h"

#include <boost/json/object.hpp>
#include <optional>

namespace agentstream::cli {

namespace json = boost::json;

namespace {

// The string member `snake` or `camel` of `object`.
std::optional<std::string_view> Field(const json::object& object, std::string_view snake,
                                      std::string_view camel) {
  for (std::string_view name : {snake, camel}) {
    if (const json::value* v = object.if_contains(name); v != nullptr && v->is_string())
      return std::string_view(v->get_string());
  }
  return std::nullopt;
}

template <class Fn>
void ForEachLine(std::string_view text, const Fn& fn) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    fn(text.substr(start, end - start));
    start = end + 1;
  }
}

class Lines {
 public:
  Lines(std::size_t max_lines, std::size_t max_chars) : max_lines_(max_lines), max_(max_chars) {}

  void Add(std::string line) {
    if (out_.size() >= max_lines_) {
      ++more_;
      return;
    }
    if (line.size() > max_) {
      std::size_t cut = max_;
      while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
      line = line.substr(0, cut) + "...";
    }
    out_.push_back(std::move(line));
  }
  // Each line of `text` with `prefix`; a final newline ends the last line, it makes none.
  void AddText(std::string_view prefix, std::string_view text) {
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      Add(std::string(prefix) + std::string(text.substr(start, end - start)));
      start = end + 1;
    }
  }
  // The lines of a unified diff or a patch hunk: each keeps its first character as its sign.
  void AddUnified(std::string_view text) {
    ForEachLine(text, [&](std::string_view line) {
      if (line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") ||
          line.starts_with("index ") || line.empty())
        return;
      if (line.starts_with("@@")) return Add(std::string(line));
      const char sign = line[0];
      if (sign == '+' || sign == '-' || sign == ' ')
        return Add(std::string(1, sign) + " " + std::string(line.substr(1)));
      Add("  " + std::string(line));
    });
  }
  std::vector<std::string> Take() {
    if (more_ > 0) out_.push_back("... " + std::to_string(more_) + " more lines");
    return std::move(out_);
  }

 private:
  std::size_t max_lines_, max_;
  std::vector<std::string> out_;
  std::size_t more_ = 0;
};

// The Begin/End Patch text of codex's apply_patch: in `patch` or `input`, or an element of the
// `command` argv.
std::optional<std::string_view> PatchText(const json::object& input) {
  constexpr std::string_view kBegin = "*** Begin Patch";
  for (std::string_view name : {"patch", "input"}) {
    if (const json::value* v = input.if_contains(name);
        v != nullptr && v->is_string() &&
        std::string_view(v->get_string()).find(kBegin) != std::string_view::npos)
      return std::string_view(v->get_string());
  }
  if (const json::value* command = input.if_contains("command"); command && command->is_array()) {
    for (const json::value& arg : command->get_array())
      if (arg.is_string() &&
          std::string_view(arg.get_string()).find(kBegin) != std::string_view::npos)
        return std::string_view(arg.get_string());
  }
  return std::nullopt;
}

void AddPatch(Lines& lines, std::string_view patch) {
  bool in_file = false;
  ForEachLine(patch, [&](std::string_view line) {
    for (std::string_view action : {"Add", "Delete", "Update"}) {
      const std::string header = "*** " + std::string(action) + " File: ";
      if (line.starts_with(header)) {
        std::string lower(action);
        lower[0] = static_cast<char>(lower[0] - 'A' + 'a');
        lines.Add("--- " + std::string(line.substr(header.size())) + " (" + lower + ")");
        in_file = true;
        return;
      }
    }
    if (line.starts_with("*** Move to: ")) {
      if (in_file) lines.Add("    moved to " + std::string(line.substr(13)));
      return;
    }
    if (line.starts_with("*** ") || !in_file || line.empty()) return;
    if (line.starts_with("@@")) return lines.Add(std::string(line));
    const char sign = line[0];
    if (sign == '+' || sign == '-' || sign == ' ')
      lines.Add(std::string(1, sign) + " " + std::string(line.substr(1)));
  });
}

// A codex file change's kind: a string, or an object with its `type`.
std::string ChangeKind(const json::object& change) {
  for (std::string_view name : {"kind", "type"}) {
    const json::value* k = change.if_contains(name);
    if (k == nullptr) continue;
    if (k->is_string()) return std::string(k->get_string());
    if (k->is_object())
      if (const json::value* t = k->get_object().if_contains("type"); t && t->is_string())
        return std::string(t->get_string());
  }
  return "update";
}

void AddChange(Lines& lines, std::string_view path, const json::object& change) {
  const std::string kind = ChangeKind(change);
  lines.Add("--- " + std::string(path) + " (" + kind + ")");
  if (auto diff = Field(change, "unified_diff", "diff")) return lines.AddUnified(*diff);
  if (auto content = Field(change, "content", "content"))
    lines.AddText(kind == "delete" ? "- " : "+ ", *content);
}

// Codex file changes (`changes`: a list of {path, kind, diff} or an object keyed by path); false
// when there are none.
bool AddChanges(Lines& lines, const json::object& input) {
  const json::value* changes = input.if_contains("changes");
  if (changes == nullptr) return false;
  bool any = false;
  if (changes->is_array()) {
    for (const json::value& c : changes->get_array()) {
      if (!c.is_object()) continue;
      const json::value* path = c.get_object().if_contains("path");
      if (path == nullptr || !path->is_string()) continue;
      AddChange(lines, path->get_string(), c.get_object());
      any = true;
    }
  } else if (changes->is_object()) {
    for (const auto& [path, c] : changes->get_object()) {
      if (!c.is_object()) continue;
      AddChange(lines, path, c.get_object());
      any = true;
    }
  }
  return any;
}

// An ACP `diff` content item ({type: "diff", path, oldText?, newText}): the input itself, or the
// items of its `content` list. False when there are none.
bool AddAcpDiffs(Lines& lines, const json::object& input) {
  auto is_diff = [](const json::object& o) {
    const json::value* type = o.if_contains("type");
    const json::value* path = o.if_contains("path");
    const json::value* text = o.if_contains("newText");
    return path && path->is_string() && text && text->is_string() &&
           (type == nullptr || (type->is_string() && type->get_string() == "diff"));
  };
  std::vector<const json::object*> diffs;
  if (is_diff(input)) {
    diffs.push_back(&input);
  } else if (const json::value* content = input.if_contains("content");
             content && content->is_array()) {
    for (const json::value& c : content->get_array())
      if (c.is_object() && c.get_object().contains("type") && is_diff(c.get_object()))
        diffs.push_back(&c.get_object());
  }
  for (const json::object* d : diffs) {
    const std::string_view old_text = Field(*d, "oldText", "oldText").value_or("");
    lines.Add("--- " + std::string(d->at("path").get_string()) +
              (old_text.empty() ? " (written)" : ""));
    lines.AddText("- ", old_text);
    lines.AddText("+ ", d->at("newText").get_string());
  }
  return !diffs.empty();
}

}  // namespace

std::vector<std::string> EditDiffLines(std::string_view tool, const json::value& input,
                                       std::size_t max_lines, std::size_t max_line_chars) {
  const json::object* object = input.if_object();
  if (object == nullptr) return {};
  const std::optional<std::string_view> path = Field(*object, "file_path", "filePath");
  Lines lines(max_lines, max_line_chars);
  if (!path) {
    if (const auto patch = PatchText(*object)) {
      AddPatch(lines, *patch);
    } else if (!AddChanges(lines, *object) && !AddAcpDiffs(lines, *object)) {
      return {};
    }
  } else if (tool == "Edit" || tool == "edit") {
    const auto old_text = Field(*object, "old_string", "oldString");
    const auto new_text = Field(*object, "new_string", "newString");
    if (!old_text || !new_text) return {};
    lines.Add("--- " + std::string(*path));
    lines.AddText("- ", *old_text);
    lines.AddText("+ ", *new_text);
  } else if (tool == "MultiEdit") {
    const json::value* edits = object->if_contains("edits");
    if (edits == nullptr || !edits->is_array()) return {};
    lines.Add("--- " + std::string(*path));
    for (const json::value& edit : edits->get_array()) {
      if (!edit.is_object()) continue;
      lines.AddText("- ", Field(edit.get_object(), "old_string", "oldString").value_or(""));
      lines.AddText("+ ", Field(edit.get_object(), "new_string", "newString").value_or(""));
    }
  } else if (tool == "Write" || tool == "write") {
    const auto content = Field(*object, "content", "content");
    if (!content) return {};
    lines.Add("--- " + std::string(*path) + " (written)");
    lines.AddText("+ ", *content);
  } else {
    return {};
  }
  return lines.Take();
}

}  // namespace agentstream::cli

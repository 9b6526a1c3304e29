#include "cli/client/edit_diff.h"

#include <boost/json/object.hpp>
#include <optional>

namespace agentstream::cli::client {

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
  std::vector<std::string> Take() {
    if (more_ > 0) out_.push_back("... " + std::to_string(more_) + " more lines");
    return std::move(out_);
  }

 private:
  std::size_t max_lines_, max_;
  std::vector<std::string> out_;
  std::size_t more_ = 0;
};

}  // namespace

std::vector<std::string> EditDiffLines(std::string_view tool, const json::value& input,
                                       std::size_t max_lines, std::size_t max_line_chars) {
  const json::object* object = input.if_object();
  if (object == nullptr) return {};
  const std::optional<std::string_view> path = Field(*object, "file_path", "filePath");
  if (!path) return {};
  Lines lines(max_lines, max_line_chars);
  if (tool == "Edit" || tool == "edit") {
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

}  // namespace agentstream::cli::client

#include "streams/json_mode.h"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

namespace agentstream::streams {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Drops whitespace outside strings. The input is valid JSON. Room is left for the ',' a stored
// value ends with.
std::string Minify(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 1);
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (IsSpace(c)) continue;
    if (c == '"') in_string = true;
    out += c;
  }
  return out;
}

// Splits minified "e1,e2,..." (top level, no brackets) at its top-level commas.
std::vector<std::string_view> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  bool in_string = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < text.size()) parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

Result<std::string> ProcessJsonAppend(std::string_view body, bool initial_create) {
  // The parsed value lives only here: a small one in a buffer on the stack rather than in a few
  // dozen heap allocations.
  unsigned char scratch[4096];
  boost::json::monotonic_resource arena(scratch, sizeof scratch);
  boost::system::error_code ec;
  const boost::json::value value = boost::json::parse(body, ec, &arena);
  if (ec) return Error(ErrorCode::kInvalidArgument, "invalid JSON");
  std::string minified = Minify(body);
  if (!value.is_array()) {
    minified += ',';
    return minified;
  }
  if (value.as_array().empty()) {
    if (initial_create) return std::string();
    return Error(ErrorCode::kInvalidArgument, "empty arrays are not allowed");
  }
  // Without the outer brackets, each top-level element followed by ','.
  std::string out;
  out.reserve(minified.size());
  for (const std::string_view element :
       SplitTopLevel(std::string_view(minified).substr(1, minified.size() - 2))) {
    out += element;
    out += ',';
  }
  return out;
}

void AppendJsonElements(std::string_view stored, std::string* out) {
  if (!stored.empty() && stored.back() == ',') stored.remove_suffix(1);
  if (stored.empty()) return;
  if (out->size() > 1) *out += ',';
  *out += stored;
}

Result<std::string> JsonPrefix(std::string_view stored, std::size_t count) {
  if (!stored.empty() && stored.back() == ',') stored.remove_suffix(1);
  const std::vector<std::string_view> elements = SplitTopLevel(stored);
  if (count > elements.size())
    return Error(ErrorCode::kInvalidArgument, "sub-offset beyond the message's elements");
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    out += elements[i];
    out += ',';
  }
  return out;
}

}  // namespace agentstream::streams

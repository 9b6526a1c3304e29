#include "search/query.h"

#include "core/utf8.h"

namespace agentstream {

Result<std::vector<std::string>> QueryWords(std::string_view text) {
  if (text.size() > kMaxQueryBytes || !IsValidUtf8(text)) {
    return Error(ErrorCode::kInvalidArgument, "a search query must be UTF-8 text of at most " +
                                                  std::to_string(kMaxQueryBytes) + " bytes");
  }
  // A word is a run of letters and digits: ASCII ones, '_' and every non-ASCII character (the
  // stores' tokenizers split those further where they see fit).
  auto in_word = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
           (u >= 'A' && u <= 'Z') || u == '_';
  };
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size() && words.size() < kMaxQueryWords) {
    while (i < text.size() && !in_word(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && in_word(text[i])) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  if (words.empty())
    return Error(ErrorCode::kInvalidArgument, "a search query needs at least one word");
  return words;
}

}  // namespace agentstream

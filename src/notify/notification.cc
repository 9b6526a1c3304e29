#include "notify/notification.h"

#include <boost/json.hpp>
#include <cstdint>

#include "core/utf8.h"

namespace agentstream::notify {

namespace {

namespace json = boost::json;

std::string Duration(std::int64_t ms) {
  const std::int64_t s = ms / 1000;
  if (s < 60) return std::to_string(s) + " s";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
  return std::to_string(s / 3600) + " h " + std::to_string(s / 60 % 60) + " min";
}

std::string FixedBody(const Candidate& c) {
  switch (c.kind) {
    case Kind::kPermission:
      return "Needs your permission";
    case Kind::kTurnFailed:
      return "The turn failed";
    case Kind::kTurnFinished:
      return "Finished after " + Duration(c.ran_ms);
    case Kind::kAutonomousFinished:
      return "A background turn finished";
    case Kind::kQueueWaiting:
      return "Idle with " + std::to_string(c.waiting) + (c.waiting == 1 ? " prompt" : " prompts") +
             " waiting";
  }
  return "";
}

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

std::string Summary(std::string_view text, std::size_t max_chars) {
  if (max_chars == 0) return "";
  const std::string clean = SanitizeUtf8(text);
  std::string folded;
  bool space = false;
  for (char c : clean) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      space = !folded.empty();
      continue;
    }
    if (space) folded.push_back(' ');
    space = false;
    folded.push_back(c);
  }
  std::size_t chars = 0;
  for (char c : folded) chars += IsContinuation(static_cast<unsigned char>(c)) ? 0 : 1;
  if (chars <= max_chars) return folded;
  // Keep max_chars - 1 characters and the ellipsis.
  std::size_t kept = 0;
  std::size_t end = 0;
  for (; end < folded.size(); ++end) {
    if (IsContinuation(static_cast<unsigned char>(folded[end]))) continue;
    if (kept == max_chars - 1) break;
    ++kept;
  }
  return folded.substr(0, end) + "\xE2\x80\xA6";
}

Notification Compose(const Candidate& candidate, const SessionId& agent, std::string_view title,
                     bool previews) {
  Notification n;
  n.agent = agent.str();
  n.cursor = FormatCursor(candidate.cursor);
  n.kind = candidate.kind;
  n.title = BoundUtf8(title.empty() ? std::string_view(n.agent) : title, kMaxTitleBytes).text;
  n.body = FixedBody(candidate);
  if (previews) {
    std::string summary = Summary(candidate.text, kMaxPreviewChars);
    if (!summary.empty()) n.body += ": " + summary;
  }
  n.url = "/#agent=" + n.agent + "&cursor=" + n.cursor;
  return n;
}

std::string PayloadJson(const Notification& n) {
  return json::serialize(json::object{{"agent", n.agent},
                                      {"cursor", n.cursor},
                                      {"kind", KindName(n.kind)},
                                      {"title", n.title},
                                      {"body", n.body},
                                      {"url", n.url}});
}

}  // namespace agentstream::notify

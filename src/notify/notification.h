// A notification as a device receives it: the Web Push payload and the ntfy message
// (docs/notifications.md). Pure.
#pragma once

#include <cstddef>
#include <string>

#include "core/ids.h"
#include "notify/classify.h"

namespace agentstream::notify {

// A payload is at most this many bytes of JSON (Web Push allows about 4 KiB of plaintext).
inline constexpr std::size_t kMaxPayloadBytes = std::size_t{3} * 1024;
// A preview is at most this many characters (Unicode code points) of the relevant text.
inline constexpr std::size_t kMaxPreviewChars = 120;
// The agent title is cut to this many bytes.
inline constexpr std::size_t kMaxTitleBytes = 200;

struct Notification {
  std::string agent;   // "ses_1"
  std::string cursor;  // "1:42": with the device, the notification's idempotency key
  Kind kind = Kind::kPermission;
  std::string title;  // the agent's title (its id when it has none)
  std::string body;   // a fixed text per kind; with previews, plus a summary of the text
  std::string url;    // "/#agent=ses_1&cursor=1:42"
};

// The notification of `candidate` for the agent `agent` titled `title`. The body carries a
// summary of the candidate's text (at most kMaxPreviewChars characters) only when `previews`.
Notification Compose(const Candidate& candidate, const SessionId& agent, std::string_view title,
                     bool previews);

// {"agent","cursor","kind","title","body","url"}: at most kMaxPayloadBytes.
std::string PayloadJson(const Notification& n);

// `text` cut to at most `max_chars` code points of sanitized UTF-8, whitespace runs folded to
// one space; an ellipsis ends a cut text (counted in `max_chars`).
std::string Summary(std::string_view text, std::size_t max_chars);

}  // namespace agentstream::notify

// Routing by presence (docs/notifications.md, "Routing by presence"): nobody is notified about an
// agent that a visible client is showing; otherwise every device whose settings switch the kind
// on is. Presence only routes: it never holds back or reorders what the log delivers. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ids.h"
#include "store/device_store.h"

namespace agentstream::notify {

// A client's presence row expires this long after its last heartbeat (the page sends one every
// 15 s and on every change of visibility or focus), so a suspended phone stops counting.
inline constexpr std::int64_t kPresenceExpiryMs = 45000;
// A visible client counts as showing its focused agent while its last activity is this recent.
inline constexpr std::int64_t kActivityWindowMs = 120000;

// True when a client reports `agent` focused on a visible page, with a row not expired at
// `now_ms` and activity within kActivityWindowMs.
bool ShownOnAClient(const std::vector<PresenceRecord>& presence, const SessionId& agent,
                    TimestampMs now_ms);

}  // namespace agentstream::notify

#include "notify/routing.h"

#include <algorithm>

namespace agentstream::notify {

bool ShownOnAClient(const std::vector<PresenceRecord>& presence, const SessionId& agent,
                    TimestampMs now_ms) {
  return std::any_of(presence.begin(), presence.end(), [&](const PresenceRecord& p) {
    return p.visible && p.focused_agent == agent.str() && p.expires_ms > now_ms &&
           now_ms - p.last_activity_ms <= kActivityWindowMs;
  });
}

}  // namespace agentstream::notify

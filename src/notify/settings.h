// A device's notification settings (docs/notifications.md and docs/protocol.md,
// "/v1/devices/{id}/notifications"): where to send (a browser's Web Push subscription, an ntfy
// topic, both or neither), which kinds, whether the body may carry a preview, and how long a
// foreground turn must run before its end is worth a notification. Stored as the device's
// `settings` text (DeviceStore::SetDeviceSettings). Pure; thread-safe.
#pragma once

#include <array>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"
#include "notify/classify.h"
#include "push/sender.h"
#include "push/subscription.h"

namespace agentstream::notify {

inline constexpr std::int64_t kDefaultMinTurnMs = 30000;
inline constexpr std::int64_t kMaxMinTurnMs = 86400000;  // a day

struct Settings {
  std::optional<push::PushSubscription> web_push;
  std::optional<push::NtfyTarget> ntfy;
  std::array<bool, std::size(kAllKinds)> kinds{true, true, true, true, true};  // by Kind
  bool previews = false;
  std::int64_t min_turn_ms = kDefaultMinTurnMs;

  bool wants(Kind kind) const { return kinds[static_cast<std::size_t>(kind)]; }
  // Somewhere to send to.
  bool has_target() const { return web_push.has_value() || ntfy.has_value(); }
  friend bool operator==(const Settings&, const Settings&) = default;
};

// Reads the settings JSON strictly: members webPush (a subscription, or null), ntfy ({url,
// topic} or null), kinds (an object of the five kind names to booleans; a kind left out stays
// on), previews (boolean), minTurnMs (0..kMaxMinTurnMs); each optional, nothing else.
// `allow_http`: push endpoints and ntfy servers over plain http are accepted (`serve
// --push-allow-http`). kInvalidArgument naming the member.
Result<Settings> SettingsFromJson(const boost::json::value& v, bool allow_http);
// The settings as the API shows them and the store keeps them (every member present).
boost::json::object SettingsToJson(const Settings& settings);
// The stored text of a device: "" (never set) reads as the defaults; text that does not parse
// as settings (written by another version) reads as the defaults too, with no target.
Settings SettingsFromStored(const std::string& text);

// Whether the device with `settings` is told about `candidate` (its kind switched on; a
// foreground turn's end only after at least min_turn_ms).
bool Wants(const Settings& settings, const Candidate& candidate);

}  // namespace agentstream::notify

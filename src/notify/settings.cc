#include "notify/settings.h"

#include <boost/json.hpp>

namespace agentstream::notify {

namespace {

namespace json = boost::json;

Status Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

Status ReadKinds(const json::value& v, Settings& out) {
  if (!v.is_object()) return Invalid("kinds must be an object of booleans");
  for (const auto& [name, on] : v.as_object()) {
    auto kind = KindFromName(name);
    if (!kind) return Invalid("kinds: unknown kind '" + std::string(name) + "'");
    if (!on.is_bool()) return Invalid("kinds." + std::string(name) + " must be a boolean");
    out.kinds[static_cast<std::size_t>(*kind)] = on.as_bool();
  }
  return Status::Ok();
}

Status ReadNtfy(const json::value& v, bool allow_http, Settings& out) {
  auto target = push::NtfyTargetFromJson(v);
  if (!target.ok()) return Invalid("ntfy: " + target.status().message());
  if (!allow_http && target->url.rfind("https://", 0) != 0)
    return Invalid("ntfy.url must be https:// (plain http needs serve --push-allow-http)");
  out.ntfy = std::move(*target);
  return Status::Ok();
}

}  // namespace

Result<Settings> SettingsFromJson(const json::value& v, bool allow_http) {
  if (!v.is_object()) return Invalid("the notification settings must be a JSON object");
  Settings out;
  for (const auto& [key, value] : v.as_object()) {
    if (key == "webPush") {
      if (value.is_null()) continue;
      auto sub = push::SubscriptionFromJson(value, push::SubscriptionPolicy{allow_http});
      if (!sub.ok()) return Invalid("webPush: " + sub.status().message());
      out.web_push = std::move(*sub);
    } else if (key == "ntfy") {
      if (value.is_null()) continue;
      AS_RETURN_IF_ERROR(ReadNtfy(value, allow_http, out));
    } else if (key == "kinds") {
      AS_RETURN_IF_ERROR(ReadKinds(value, out));
    } else if (key == "previews") {
      if (!value.is_bool()) return Invalid("previews must be a boolean");
      out.previews = value.as_bool();
    } else if (key == "minTurnMs") {
      if (!value.is_int64() && !value.is_uint64()) return Invalid("minTurnMs must be an integer");
      if (value.is_uint64() || value.as_int64() < 0 || value.as_int64() > kMaxMinTurnMs)
        return Invalid("minTurnMs must be 0 to " + std::to_string(kMaxMinTurnMs));
      out.min_turn_ms = value.as_int64();
    } else {
      return Invalid("unknown member '" + std::string(key) + "' in the notification settings");
    }
  }
  return out;
}

json::object SettingsToJson(const Settings& settings) {
  json::object kinds;
  for (Kind kind : kAllKinds) kinds[KindName(kind)] = settings.wants(kind);
  return json::object{
      {"webPush", settings.web_push ? push::SubscriptionToJson(*settings.web_push) : json::value()},
      {"ntfy", settings.ntfy ? push::NtfyTargetToJson(*settings.ntfy) : json::value()},
      {"kinds", std::move(kinds)},
      {"previews", settings.previews},
      {"minTurnMs", settings.min_turn_ms},
  };
}

Settings SettingsFromStored(const std::string& text) {
  if (text.empty()) return Settings{};
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return Settings{};
  // Stored settings were accepted once; http endpoints among them were allowed then.
  auto settings = SettingsFromJson(v, /*allow_http=*/true);
  return settings.ok() ? std::move(*settings) : Settings{};
}

bool Wants(const Settings& settings, const Candidate& candidate) {
  if (!settings.wants(candidate.kind)) return false;
  if (candidate.kind == Kind::kTurnFinished) return candidate.ran_ms >= settings.min_turn_ms;
  return true;
}

}  // namespace agentstream::notify

#include "server/notify_routes.h"

#include <boost/json.hpp>

#include "api/api_json.h"
#include "server/api_router.h"

namespace agentstream::server {

namespace json = boost::json;

NotifyRoutes::NotifyRoutes(notify::Notifications* notifications) : notifications_(notifications) {}

bool NotifyRoutes::Handle(const HttpRequest& request, const std::vector<std::string>& seg,
                          const std::string& caller_device,
                          const std::function<void(HttpResponse)>& reply) {
  const bool vapid =
      seg.size() == 3 && seg[0] == "v1" && seg[1] == "notifications" && seg[2] == "vapid";
  const bool settings =
      seg.size() == 4 && seg[0] == "v1" && seg[1] == "devices" && seg[3] == "notifications";
  if (!vapid && !settings) return false;
  if (notifications_ == nullptr) {
    reply(ErrorResponse(
        Error(ErrorCode::kNotFound, "this daemon sends no notifications (" + request.path + ")")));
    return true;
  }
  if (vapid) {
    if (request.method != "GET")
      reply(ErrorResponse(NoEndpoint(request)));
    else
      reply(JsonValueResponse(json::object{{"publicKey", notifications_->vapid_public_key()}}));
    return true;
  }
  std::string device = seg[2];
  if (device == "self") {
    if (caller_device.empty()) {
      reply(ErrorResponse(Error(ErrorCode::kInvalidArgument,
                                "`self` names the calling device; the owner is not a device")));
      return true;
    }
    device = caller_device;
  }
  if (!caller_device.empty() && device != caller_device) {
    reply(CodedErrorResponse(403, "forbidden",
                             "a device may read and change only its own notification settings"));
    return true;
  }
  if (request.method == "GET") {
    auto got = notifications_->Get(device);
    reply(got.ok() ? JsonValueResponse(notify::SettingsToJson(*got)) : ErrorResponse(got.status()));
  } else if (request.method == "PUT") {
    Result<json::value> body = api::ParseJson(request.body);
    if (!body.ok()) {
      reply(ErrorResponse(body.status()));
      return true;
    }
    auto saved = notifications_->Put(device, *body);
    reply(saved.ok() ? JsonValueResponse(notify::SettingsToJson(*saved))
                     : ErrorResponse(saved.status()));
  } else if (request.method == "DELETE") {
    Status deleted = notifications_->Delete(device);
    reply(deleted.ok() ? JsonValueResponse(notify::SettingsToJson(notify::Settings{}))
                       : ErrorResponse(deleted));
  } else {
    reply(ErrorResponse(NoEndpoint(request)));
  }
  return true;
}

}  // namespace agentstream::server

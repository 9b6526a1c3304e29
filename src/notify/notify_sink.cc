#include "notify/notify_sink.h"

#include <boost/json.hpp>
#include <utility>
#include <vector>

#include "log/log.h"
#include "notify/classify.h"
#include "notify/notification.h"
#include "notify/routing.h"
#include "notify/settings.h"
#include "push/sender.h"

namespace agentstream::notify {

namespace {

namespace json = boost::json;
using consumers::Delivery;
using consumers::NotDelivered;
using consumers::SinkAck;

// The ntfy priority of a kind (1..5): what needs the person is high.
int NtfyPriority(Kind kind) {
  return kind == Kind::kPermission || kind == Kind::kTurnFailed ? 4 : 3;
}

class NotifySink final : public consumers::Sink {
 public:
  NotifySink(EventLog& log, DeviceStore& devices, std::shared_ptr<const NotifySinkOptions> options,
             std::string device, std::chrono::milliseconds timeout)
      : log_(log),
        devices_(devices),
        options_(std::move(options)),
        device_(std::move(device)),
        timeout_(timeout) {}

  Result<SinkAck> Send(const Delivery& d, const json::value& /*prepared*/) override {
    Track track = TrackFromJson(d.state);
    const std::vector<Candidate> candidates = Classify(track, d.events);
    SinkAck ack{TrackToJson(track)};
    auto device = devices_.GetDevice(device_);
    if (!device.ok() && device.status().code() == ErrorCode::kNotFound) return ack;
    if (!device.ok()) return device.status();
    // A revoked device, or one without a target, is sent nothing (its consumer goes with it).
    Settings settings = SettingsFromStored(device->settings);
    if (device->revoked() || !settings.has_target()) return ack;
    std::vector<const Candidate*> wanted;
    for (const Candidate& c : candidates)
      if (Wants(settings, c)) wanted.push_back(&c);
    if (wanted.empty()) return ack;
    const TimestampMs now = system::Now(options_->clock);
    AS_ASSIGN_OR_RETURN(std::vector<PresenceRecord> presence, devices_.ListPresence(now));
    if (ShownOnAClient(presence, d.session, now)) return ack;
    AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(d.session));
    for (const Candidate* c : wanted) {
      const Notification n = Compose(*c, d.session, info.meta.title, settings.previews);
      if (auto failed = SendOne(n, settings)) {
        if (failed->retry_after_ms < 0) return Error(ErrorCode::kUnavailable, failed->error);
        ack.not_delivered = std::move(*failed);
        return ack;
      }
    }
    return ack;
  }

 private:
  // Sends `n` to every target of `settings`; nullopt when each took it (or is gone: then it is
  // removed). A failure with retry_after_ms < 0 is one not worth a Retry-After wait.
  std::optional<NotDelivered> SendOne(const Notification& n, Settings& settings) {
    if (settings.web_push) {
      push::PushMessage message;
      message.payload = PayloadJson(n);
      message.topic = push::TopicFor(n.agent);
      message.urgency = n.kind == Kind::kPermission ? "high" : "normal";
      push::PushOutcome out = push::SendPush(*settings.web_push, options_->vapid, options_->subject,
                                             message, timeout_, options_->ca_file);
      if (auto failed = Classified(out, "web push")) return failed;
      if (out.kind == push::PushOutcome::kGone) {
        ForgetSubscription(*settings.web_push, out);
        settings.web_push.reset();
      }
    }
    if (settings.ntfy) {
      const std::string click = options_->public_url.empty() ? "" : options_->public_url + n.url;
      push::PushOutcome out = push::SendNtfy(*settings.ntfy, n.title, n.body, NtfyPriority(n.kind),
                                             click, timeout_, options_->ca_file);
      if (auto failed = Classified(out, "ntfy")) return failed;
    }
    return std::nullopt;
  }

  static std::optional<NotDelivered> Classified(const push::PushOutcome& out,
                                                std::string_view what) {
    const std::string why =
        std::string(what) + " answered " + std::to_string(out.status) + ": " + out.detail;
    switch (out.kind) {
      case push::PushOutcome::kDelivered:
      case push::PushOutcome::kGone:
        return std::nullopt;
      case push::PushOutcome::kRetry:
        return NotDelivered{why, out.retry_after_ms};
      case push::PushOutcome::kRejected:
        return NotDelivered{why, -1};
    }
    return NotDelivered{why, -1};
  }

  // The push service says `gone` is no more: the device's settings lose it (read again, so a
  // concurrent change of the other fields, or a new subscription, is kept).
  void ForgetSubscription(const push::PushSubscription& gone, const push::PushOutcome& out) {
    log::Info("notify.subscription_gone",
              {{"device", device_}, {"status", out.status}, {"detail", out.detail}});
    auto device = devices_.GetDevice(device_);
    if (!device.ok()) return;
    Settings now = SettingsFromStored(device->settings);
    if (!now.web_push || now.web_push->endpoint != gone.endpoint) return;
    now.web_push.reset();
    Status saved = devices_.SetDeviceSettings(device_, json::serialize(SettingsToJson(now)));
    if (!saved.ok())
      log::Warn("notify.subscription_not_removed",
                {{"device", device_}, {"error", saved.ToString()}});
  }

  EventLog& log_;
  DeviceStore& devices_;
  const std::shared_ptr<const NotifySinkOptions> options_;
  const std::string device_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace

consumers::SinkFactory MakeNotifySinkFactory(EventLog& log, DeviceStore& devices,
                                             std::shared_ptr<const NotifySinkOptions> options) {
  return [&log, &devices, options = std::move(options)](
             const consumers::ConsumerSpec& spec) -> Result<std::unique_ptr<consumers::Sink>> {
    if (spec.sink.device.empty())
      return Error(ErrorCode::kInvalidArgument, "a notify sink names its device");
    return std::unique_ptr<consumers::Sink>(std::make_unique<NotifySink>(
        log, devices, options, spec.sink.device, std::chrono::milliseconds(spec.sink.timeout_ms)));
  };
}

}  // namespace agentstream::notify

#include "consumers/sinks.h"

#include <sodium.h>

#include <boost/json.hpp>
#include <chrono>
#include <future>

#include "net/http_client.h"
#include "system/wall_clock.h"

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

class WebhookSink final : public Sink {
 public:
  explicit WebhookSink(SinkSpec spec) : spec_(std::move(spec)) {}

  Result<SinkAck> Send(const Delivery& d, const json::value& prepared) override {
    net::HttpRequest request;
    request.url = spec_.url;
    request.body = DeliveryToJson(d);
    request.timeout = std::chrono::milliseconds(spec_.timeout_ms);
    const std::string timestamp = std::to_string(system::WallClockMs() / 1000);
    request.headers = spec_.headers;
    request.headers.emplace_back("Idempotency-Key", d.idempotency_key);
    request.headers.emplace_back("X-Agentstream-Timestamp", timestamp);
    request.headers.emplace_back("X-Agentstream-Signature",
                                 WebhookSignature(spec_.secret, timestamp, request.body));
    AS_ASSIGN_OR_RETURN(net::HttpReply reply, net::SendHttpRequest(request));
    if (reply.status < 200 || reply.status > 299)
      return Error(ErrorCode::kUnavailable, spec_.url + " answered " +
                                                std::to_string(reply.status) + ": " +
                                                reply.body.substr(0, 200));
    return SinkAck{StateFromReply(reply.body)};
  }

 private:
  const SinkSpec spec_;
};

class ParentSink final : public Sink {
 public:
  ParentSink(SessionId parent, std::int64_t timeout_ms, ParentAppender append)
      : parent_(std::move(parent)), timeout_ms_(timeout_ms), append_(std::move(append)) {}

  Result<SinkAck> Send(const Delivery& d, const json::value& prepared) override {
    if (!append_) return Error(ErrorCode::kUnavailable, "no parent-session appender is wired");
    auto promise = std::make_shared<std::promise<Status>>();
    auto future = promise->get_future();
    append_(parent_, d, [promise](Status s) { promise->set_value(std::move(s)); });
    if (future.wait_for(std::chrono::milliseconds(timeout_ms_)) != std::future_status::ready)
      return Error(ErrorCode::kUnavailable, "appending to the parent session timed out");
    AS_RETURN_IF_ERROR(future.get());
    return SinkAck{};
  }

 private:
  const SessionId parent_;
  const std::int64_t timeout_ms_;
  const ParentAppender append_;
};

}  // namespace

std::optional<json::value> StateFromReply(std::string_view body) {
  if (body.empty()) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const json::value* state = v.as_object().if_contains("state");
  if (state == nullptr) return std::nullopt;
  return *state;
}

Result<std::unique_ptr<Sink>> MakeSink(const ConsumerSpec& spec, const ParentAppender& parent,
                                       const SinkFactory& notify) {
  switch (spec.sink.kind) {
    case SinkKind::kWebhook:
      return MakeWebhookSink(spec.sink);
    case SinkKind::kCommand:
      return MakeCommandSink(spec.sink);
    case SinkKind::kParentSession:
      return std::unique_ptr<Sink>(
          std::make_unique<ParentSink>(spec.sink.parent, spec.sink.timeout_ms, parent));
    case SinkKind::kJsonl:
      return MakeJsonlSink(spec.sink);
    case SinkKind::kNotify:
      if (!notify) return Error(ErrorCode::kInvalidArgument, "this daemon sends no notifications");
      return notify(spec);
  }
  return Error(ErrorCode::kInvalidArgument, "unknown sink kind");
}

std::unique_ptr<Sink> MakeWebhookSink(const SinkSpec& spec) {
  return std::make_unique<WebhookSink>(spec);
}

}  // namespace agentstream::consumers

// The Beast transport of generic Durable Streams (/v1/stream/...): one request taken over from
// the HTTP connection, its long-poll wait or SSE stream, then the connection handed back
// (ResumeHttp) for the next request. The protocol itself is streams/stream_protocol.h.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/write.hpp>
#include <cctype>
#include <deque>

#include "server/server_internal.h"
#include "streams/stream_protocol.h"

namespace agentstream::server::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

using streams::LiveRead;
using streams::Outcome;
using streams::StreamResponse;

class StreamExchange : public std::enable_shared_from_this<StreamExchange> {
 public:
  StreamExchange(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                 http::request<http::string_body> request, ResolvedRequest resolved)
      : ctx_(ctx),
        stream_(std::move(stream)),
        buffer_(std::move(buffer)),
        request_(std::move(request)),
        resolved_(std::move(resolved)),
        timer_(stream_.get_executor()) {
    ctx_.metrics.ConnectionOpened();
  }
  ~StreamExchange() {
    Unwatch();
    ctx_.metrics.ConnectionClosed();
  }

  void Run();

 private:
  void OnOutcome(Outcome outcome);
  void Respond(StreamResponse response);
  void StartLongPoll();
  void Poll(bool timed_out);
  void StartSse();
  void SseStep(bool timed_out);
  void ArmKeepAlive();
  void Send(std::string bytes);
  void WriteNext();
  void Watch();
  void Unwatch();
  void Finish();

  ServerContext& ctx_;
  ServerStream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  const ResolvedRequest resolved_;
  asio::steady_timer timer_;
  LiveRead live_;
  std::uint64_t watch_ = 0;
  bool done_ = false;
  bool sse_end_ = false;
  bool sse_more_ = false;
  bool writing_ = false;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  // A paired device's exchange is closed when the device is revoked (device_connections.h).
  DeviceConnections::Registration device_registration_;
};

void StreamExchange::Run() {
  if (!resolved_.device_id.empty()) {
    device_registration_ = ctx_.device_connections->Add(
        resolved_.device_id, [weak = weak_from_this(), executor = stream_.get_executor()] {
          asio::post(executor, [weak] {
            if (auto self = weak.lock()) self->Finish();
          });
        });
    if (!device_registration_.active()) return Finish();  // over the bound
  }
  streams::StreamRequest req;
  req.method = std::string(request_.method_string());
  const std::string_view target = request_.target();
  const std::size_t q = target.find('?');
  std::map<std::string, std::string> ignored;
  if (!ParseTarget(target.substr(0, q), &req.path, &ignored))
    return Respond(StreamResponse{400, {{"content-type", "text/plain"}}, "malformed target"});
  if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
  for (const auto& field : request_) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  req.body = std::move(request_.body());
  // Location headers and subscription callback URLs name the configured address (or the origin a
  // trusted proxy forwarded), never a direct request's Host header.
  const std::string& base_url = resolved_.base_url;
  std::weak_ptr<StreamExchange> weak = weak_from_this();
  auto executor = stream_.get_executor();
  auto self = shared_from_this();
  streams::HandleStreamRequest(*ctx_.options.streams, ctx_.options.stream_subscriptions, req,
                               base_url, [self, executor](Outcome outcome) {
                                 asio::post(executor,
                                            [self, outcome = std::move(outcome)]() mutable {
                                              self->OnOutcome(std::move(outcome));
                                            });
                               });
}

void StreamExchange::OnOutcome(Outcome outcome) {
  if (auto* response = std::get_if<StreamResponse>(&outcome)) return Respond(std::move(*response));
  live_ = std::move(std::get<LiveRead>(outcome));
  if (live_.sse) return StartSse();
  StartLongPoll();
}

void StreamExchange::Respond(StreamResponse response) {
  ctx_.metrics.Request("/v1/stream", response.status);
  LogRequest(request_.method_string(), "/v1/stream", response.status, resolved_.client_address,
             RemoteAddress(stream_.socket()), resolved_.device_id);
  streams::AddCommonHeaders(&response);
  auto res = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(response.status), request_.version() ? request_.version() : 11);
  res->set(http::field::server, "agentstream");
  if (stream_.tls()) res->set(kHstsHeader, kHstsValue);
  for (const auto& [name, value] : response.headers) {
    if (IsSafeHeaderValue(value)) res->set(name, value);
  }
  res->body() = std::move(response.body);
  // Staying open is waiting for the next request, which needs a place of the client's address.
  AddressSlot slot;
  res->keep_alive(request_.keep_alive() &&
                  slot.Acquire(*ctx_.waiting, RemoteAddress(stream_.socket())));
  const bool head = request_.method() == http::verb::head;
  res->prepare_payload();
  if (head) res->content_length(0);
  stream_.expires_after(ctx_.options.idle_timeout);
  auto on_written = [self = shared_from_this(), res,
                     slot = std::make_shared<AddressSlot>(std::move(slot))](beast::error_code ec,
                                                                            std::size_t) {
    if (ec) return;
    if (!res->keep_alive()) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      return;
    }
    ResumeHttp(self->ctx_, std::move(self->stream_), std::move(self->buffer_), std::move(*slot));
  };
  if (head) {
    auto sr = std::make_shared<http::response_serializer<http::string_body>>(*res);
    sr->split(true);
    http::async_write_header(
        stream_, *sr, [sr, on_written](beast::error_code ec, std::size_t n) { on_written(ec, n); });
    return;
  }
  http::async_write(stream_, *res, std::move(on_written));
}

void StreamExchange::Watch() {
  std::weak_ptr<StreamExchange> weak = weak_from_this();
  auto executor = stream_.get_executor();
  watch_ = ctx_.options.streams->Watch(live_.path, [weak, executor] {
    asio::post(executor, [weak] {
      auto self = weak.lock();
      if (!self || self->done_) return;
      if (self->live_.sse) {
        self->SseStep(false);
      } else {
        self->Poll(false);
      }
    });
  });
}

void StreamExchange::Unwatch() {
  if (watch_ != 0) ctx_.options.streams->Unwatch(live_.path, watch_);
  watch_ = 0;
}

void StreamExchange::StartLongPoll() {
  Watch();  // before the first read, so that an append in between is not missed
  if (watch_ == 0)
    return Respond(StreamResponse{503, {{"content-type", "text/plain"}}, "too many waiting reads"});
  timer_.expires_after(ctx_.options.long_poll_timeout);
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec && !self->done_) self->Poll(true);
  });
  Poll(false);
}

void StreamExchange::Poll(bool timed_out) {
  if (done_) return;
  auto response = streams::PollLongPoll(*ctx_.options.streams, live_, timed_out);
  if (!response) return;
  done_ = true;
  Unwatch();
  timer_.cancel();
  Respond(std::move(*response));
}

void StreamExchange::StartSse() {
  ctx_.metrics.Request("/v1/stream", 200);
  LogRequest(request_.method_string(), "/v1/stream", 200, resolved_.client_address,
             RemoteAddress(stream_.socket()), resolved_.device_id);
  stream_.expires_never();
  Watch();
  if (watch_ == 0) {
    done_ = true;
    return Respond(StreamResponse{503, {{"content-type", "text/plain"}}, "too many waiting reads"});
  }
  std::string head = streams::SseResponseHead(live_);  // ends with the empty line
  if (stream_.tls() && head.size() >= 2)
    head.insert(head.size() - 2, std::string(kHstsHeader) + ": " + kHstsValue + "\r\n");
  Send(std::move(head));
  SseStep(false);
  ArmKeepAlive();
  // A read completes (with an error) when the client goes away.
  stream_.async_read_some(
      buffer_.prepare(1),
      [self = shared_from_this()](beast::error_code, std::size_t) { self->Finish(); });
}

void StreamExchange::ArmKeepAlive() {
  timer_.expires_after(ctx_.options.long_poll_timeout);
  timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (!self || ec || self->done_) return;
    self->SseStep(true);
    self->ArmKeepAlive();
  });
}

void StreamExchange::SseStep(bool timed_out) {
  if (done_ || sse_end_) return;
  if (queued_bytes_ > ctx_.options.max_queue_bytes / 2) {
    sse_more_ = true;  // resumed when the queue drains
    return;
  }
  streams::SseOutput out = streams::SseStep(*ctx_.options.streams, live_, timed_out);
  sse_more_ = out.more;
  if (out.end) sse_end_ = true;
  if (!out.events.empty()) Send(std::move(out.events));
  if (sse_end_ && queue_.empty()) Finish();
}

void StreamExchange::Send(std::string bytes) {
  queued_bytes_ += bytes.size();
  queue_.push_back(std::move(bytes));
  if (!writing_) WriteNext();
}

void StreamExchange::WriteNext() {
  if (queue_.empty()) {
    writing_ = false;
    if (sse_end_) return Finish();
    if (sse_more_) SseStep(false);
    return;
  }
  writing_ = true;
  auto bytes = std::make_shared<std::string>(std::move(queue_.front()));
  queue_.pop_front();
  asio::async_write(stream_, asio::buffer(*bytes),
                    [self = shared_from_this(), bytes](beast::error_code ec, std::size_t) {
                      self->queued_bytes_ -= bytes->size();
                      if (ec) return self->Finish();
                      self->WriteNext();
                    });
}

void StreamExchange::Finish() {
  if (done_) return;
  done_ = true;
  Unwatch();
  timer_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

}  // namespace

void StartStreamExchange(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                         http::request<http::string_body> request, ResolvedRequest resolved) {
  std::make_shared<StreamExchange>(ctx, std::move(stream), std::move(buffer), std::move(request),
                                   std::move(resolved))
      ->Run();
}

}  // namespace agentstream::server::internal

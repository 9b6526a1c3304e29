// The Beast transport of Durable Stream reads and writes: one request taken over from the HTTP
// connection, its answer, long-poll wait or SSE stream, then the connection handed back
// (ResumeHttp) for the next request. A generic stream's request (/v1/stream/...) goes through the
// protocol layer (streams/stream_protocol.h); a live read of a session's events comes with its
// source (session_live_source.h). Either live read is a streams::LiveSource, which decides what
// to send: this file only waits and moves bytes, in gathered writes with a bound on what a slow
// client queues.
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/status.hpp>
#include <span>
#include <string_view>
#include <vector>

#include "core/ascii.h"
#include "server/server_internal.h"
#include "streams/live_source.h"
#include "streams/stream_protocol.h"

namespace agentstream::server::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

using streams::LiveRead;
using streams::Outcome;
using streams::StreamResponse;

constexpr std::size_t kMaxGatherFrames = 64;  // SSE frames in one write

class StreamExchange : public std::enable_shared_from_this<StreamExchange> {
 public:
  // `route`: the request's route pattern, for the metrics and the access log. `cors`: the
  // answers carry the generic streams' common headers (any origin may read them).
  StreamExchange(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                 http::request<http::string_body> request, ResolvedRequest resolved,
                 std::string route, bool cors)
      : ctx_(ctx),
        stream_(std::move(stream)),
        buffer_(std::move(buffer)),
        request_(std::move(request)),
        resolved_(std::move(resolved)),
        route_(std::move(route)),
        cors_(cors),
        timer_(stream_.get_executor()) {
    ctx_.metrics.ConnectionOpened();
  }
  ~StreamExchange() { ctx_.metrics.ConnectionClosed(); }

  // A request of a generic stream: through the protocol layer.
  void Run();
  // A live read of a source the caller opened.
  void Serve(std::unique_ptr<streams::LiveSource> source);

 private:
  bool Register();
  void OnOutcome(Outcome outcome);
  void Respond(StreamResponse response);
  void StartLive();
  void StartLongPoll();
  void Poll(bool timed_out);
  void StartSse();
  void Step(bool idle);
  void ArmIdle();
  void WriteNext();
  void Finish();

  ServerContext& ctx_;
  ServerStream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  const ResolvedRequest resolved_;
  const std::string route_;
  const bool cors_;
  asio::steady_timer timer_;
  std::unique_ptr<streams::LiveSource> source_;
  bool done_ = false;
  bool sse_end_ = false;
  bool sse_more_ = false;
  FrameQueue queue_;
  std::vector<asio::const_buffer> gather_;  // of the write under way
  // A paired device's exchange is closed when the device is revoked (device_connections.h).
  DeviceConnections::Registration device_registration_;
};

// Registers a paired device's exchange; false (and finished) over the device's bound.
bool StreamExchange::Register() {
  if (resolved_.device_id.empty()) return true;
  device_registration_ = ctx_.device_connections->Add(
      resolved_.device_id, [weak = weak_from_this(), executor = stream_.get_executor()] {
        asio::post(executor, [weak] {
          if (auto self = weak.lock()) self->Finish();
        });
      });
  if (device_registration_.active()) return true;
  Finish();
  return false;
}

void StreamExchange::Run() {
  if (!Register()) return;
  streams::StreamRequest req;
  req.method = std::string(request_.method_string());
  const std::string_view target = request_.target();
  const std::size_t q = target.find('?');
  std::map<std::string, std::string> ignored;
  if (!ParseTarget(target.substr(0, q), &req.path, &ignored))
    return Respond(StreamResponse{400, {{"content-type", "text/plain"}}, "malformed target"});
  if (q != std::string_view::npos) req.query = std::string(target.substr(q + 1));
  for (const auto& field : request_) {
    req.headers.emplace_back(AsciiLowered(field.name_string()), std::string(field.value()));
  }
  req.body = std::move(request_.body());
  // Location headers and subscription callback URLs name the configured address (or the origin a
  // trusted proxy forwarded), never a direct request's Host header.
  const std::string& base_url = resolved_.base_url;
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

void StreamExchange::Serve(std::unique_ptr<streams::LiveSource> source) {
  if (!Register()) return;
  source_ = std::move(source);
  StartLive();
}

void StreamExchange::OnOutcome(Outcome outcome) {
  if (auto* response = std::get_if<StreamResponse>(&outcome)) return Respond(std::move(*response));
  source_ = streams::OpenStoreLiveSource(
      *ctx_.options.streams, std::move(std::get<LiveRead>(outcome)), ctx_.options.long_poll_timeout,
      ctx_.options.max_queue_bytes / 2);
  StartLive();
}

void StreamExchange::Respond(StreamResponse response) {
  ctx_.metrics.Request(route_, response.status);
  LogRequest(request_.method_string(), route_, response.status, resolved_.client_address,
             resolved_.peer, resolved_.device_id);
  // The answer's fields in order (a later one replaces an earlier one of the same name), made
  // into one head (SerializeAnswer) rather than a Beast message, and written with the body in
  // one gathered write.
  const auto common = cors_ ? streams::CommonHeaders()
                            : std::span<const std::pair<std::string_view, std::string_view>>();
  std::vector<FieldView> fields;
  fields.reserve(2 + response.headers.size() + common.size());
  fields.emplace_back("Server", "agentstream");
  if (stream_.tls()) fields.emplace_back(kHstsHeader, kHstsValue);
  for (const auto& [name, value] : response.headers) fields.emplace_back(name, value);
  fields.insert(fields.end(), common.begin(), common.end());
  // Staying open is waiting for the next request, which needs a place of the client's address.
  AddressSlot slot;
  const bool keep_alive = request_.keep_alive() && slot.Acquire(*ctx_.waiting, resolved_.peer);
  const AnswerHead head{
      response.status, http::obsolete_reason(static_cast<http::status>(response.status)),
      request_.version() == 10 ? 10U : 11U, request_.method() == http::verb::head, keep_alive};
  struct Wire {
    SerializedAnswer answer;
    std::string body;
  };
  auto wire = std::make_shared<const Wire>(
      Wire{SerializeAnswer(head, fields, response.body.size()), std::move(response.body)});
  const std::array<asio::const_buffer, 2> buffers{
      asio::buffer(wire->answer.head),
      asio::buffer(wire->answer.with_body ? std::string_view(wire->body) : std::string_view())};
  stream_.expires_after(ctx_.options.idle_timeout);
  asio::async_write(
      stream_, buffers,
      [self = shared_from_this(), wire, keep_alive,
       slot = std::make_shared<AddressSlot>(std::move(slot))](beast::error_code ec, std::size_t) {
        if (ec) return;
        if (!keep_alive) {
          beast::error_code ignored;
          self->stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
          return;
        }
        ResumeHttp(self->ctx_, std::move(self->stream_), std::move(self->buffer_), std::move(*slot),
                   self->resolved_.peer);
      });
}

// Watches the source (before its first read, so that a change in between is not missed), then
// runs the long-poll or the SSE stream.
void StreamExchange::StartLive() {
  auto executor = stream_.get_executor();
  const bool watching = source_->Watch([weak = weak_from_this(), executor] {
    asio::post(executor, [weak] {
      auto self = weak.lock();
      if (!self || self->done_) return;
      if (self->source_->sse()) {
        self->Step(false);
      } else {
        self->Poll(false);
      }
    });
  });
  if (!watching) {
    done_ = true;
    source_.reset();
    return Respond(StreamResponse{503, {{"content-type", "text/plain"}}, "too many waiting reads"});
  }
  if (source_->sse()) return StartSse();
  StartLongPoll();
}

void StreamExchange::StartLongPoll() {
  timer_.expires_after(ctx_.options.long_poll_timeout);
  timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec && !self->done_) self->Poll(true);
  });
  Poll(false);
}

void StreamExchange::Poll(bool timed_out) {
  if (done_) return;
  auto response = source_->Poll(timed_out);
  if (!response) return;
  done_ = true;
  source_.reset();
  timer_.cancel();
  Respond(std::move(*response));
}

void StreamExchange::StartSse() {
  ctx_.metrics.Request(route_, 200);
  LogRequest(request_.method_string(), route_, 200, resolved_.client_address, resolved_.peer,
             resolved_.device_id);
  stream_.expires_never();
  std::string head = source_->SseHead();  // ends with the empty line
  if (stream_.tls() && head.size() >= 2)
    head.insert(head.size() - 2, std::string(kHstsHeader) + ": " + kHstsValue + "\r\n");
  queue_.Push(streams::Frame{std::move(head), nullptr, ""});
  Step(false);  // writes the head with the first frames
  ArmIdle();
  // A read completes (with an error) when the client goes away.
  stream_.async_read_some(
      buffer_.prepare(1),
      [self = shared_from_this()](beast::error_code, std::size_t) { self->Finish(); });
}

void StreamExchange::ArmIdle() {
  timer_.expires_after(source_->idle_interval());
  timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (!self || ec || self->done_) return;
    self->Step(true);
    if (!self->done_) self->ArmIdle();
  });
}

void StreamExchange::Step(bool idle) {
  if (done_ || sse_end_) return;
  const streams::LiveStep step = source_->Step(idle, queue_);
  if (step.drop) return Finish();  // the client resumes from its last streamNextOffset
  sse_more_ = step.more;
  if (step.end) sse_end_ = true;
  // All of the step's frames (a data event and its control event, or several) leave in one
  // gathered write.
  if (!queue_.writing) WriteNext();
}

void StreamExchange::WriteNext() {
  if (queue_.frames.empty()) {
    queue_.writing = false;
    if (sse_end_) Finish();
    return;
  }
  queue_.writing = true;
  // Every frame queued so far (at most kMaxGatherFrames) goes in one gathered write. The list of
  // buffers is the exchange's, kept from write to write, so a write allocates nothing.
  const std::size_t count = std::min(queue_.frames.size(), kMaxGatherFrames);
  gather_.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const streams::Frame& f = queue_.frames[i];
    for (std::string_view part :
         {std::string_view(f.head), f.shared ? std::string_view(*f.shared) : std::string_view(),
          std::string_view(f.tail)}) {
      if (!part.empty()) gather_.push_back(asio::buffer(part));
    }
  }
  asio::async_write(stream_, std::span<const asio::const_buffer>(gather_),
                    [self = shared_from_this(), count](beast::error_code ec, std::size_t) {
                      for (std::size_t i = 0; i < count; ++i) self->queue_.PopFront();
                      if (ec) return self->Finish();
                      if (self->sse_more_) self->Step(false);
                      self->WriteNext();
                    });
}

void StreamExchange::Finish() {
  if (done_) return;
  done_ = true;
  source_.reset();
  timer_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

}  // namespace

void StartStreamExchange(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                         http::request<http::string_body> request, ResolvedRequest resolved) {
  std::make_shared<StreamExchange>(ctx, std::move(stream), std::move(buffer), std::move(request),
                                   std::move(resolved), "/v1/stream", /*cors=*/true)
      ->Run();
}

void StartLiveRead(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                   http::request<http::string_body> request, ResolvedRequest resolved,
                   std::string route, std::unique_ptr<streams::LiveSource> source) {
  std::make_shared<StreamExchange>(ctx, std::move(stream), std::move(buffer), std::move(request),
                                   std::move(resolved), std::move(route), /*cors=*/false)
      ->Serve(std::move(source));
}

}  // namespace agentstream::server::internal

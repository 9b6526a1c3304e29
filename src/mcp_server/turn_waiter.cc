#include "mcp_server/turn_waiter.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <map>
#include <thread>
#include <utility>

#include "api/api_json.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"
#include "client/stream_frames.h"

namespace agentstream::mcp_server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using client::TurnEnd;

namespace {
constexpr std::chrono::milliseconds kFirstBackoff{200};
constexpr std::chrono::milliseconds kMaxBackoff{5000};
}  // namespace

// Shared by the waiter and its waits; the waits run on `io`'s one thread.
struct TurnWaiter::Impl {
  explicit Impl(const client::TransportOptions& options)
      : http(options), endpoint(client::ParseEndpoint(options.url)) {
    if (endpoint.ok() && endpoint->server.tls)
      endpoint = Error(ErrorCode::kInvalidArgument,
                       "waiting needs the daemon's own http:// address, not " + options.url);
  }

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  client::TransportOptions http;
  Result<client::Endpoint> endpoint;
  std::map<std::uint64_t, std::shared_ptr<Wait>> waits;  // the io thread only
  std::atomic<std::uint64_t> next_id{1};
  std::atomic<std::size_t> open{0};
  std::thread thread;
};

// One wait: reads, one long-poll at a time, until the turn ends, the deadline passes, it is
// cancelled or an error that retrying cannot fix. Lives on the io thread.
class TurnWaiter::Wait : public std::enable_shared_from_this<Wait> {
 public:
  Wait(Impl& impl, std::uint64_t id, TurnWaitRequest request, Done done)
      : impl_(impl),
        id_(id),
        request_(std::move(request)),
        done_(std::move(done)),
        matcher_(request_.client_id, request_.turn),
        offset_(request_.from),
        deadline_(impl.io),
        pause_(impl.io),
        resolver_(impl.io) {}

  void Begin() {
    if (!impl_.endpoint.ok()) return Finish(impl_.endpoint.status());
    deadline_.expires_after(request_.timeout);
    deadline_.async_wait([self = shared_from_this()](const beast::error_code& ec) {
      if (!ec) self->Finish(self->matcher_.end());  // the time ran out: no outcome
    });
    Poll();
  }

  // Ends the wait once: `done` runs with `end`.
  void Finish(Result<TurnEnd> end) {
    if (finished_) return;
    finished_ = true;
    deadline_.cancel();
    pause_.cancel();
    resolver_.cancel();
    if (stream_) stream_->close();
    impl_.waits.erase(id_);
    --impl_.open;
    Done done = std::move(done_);
    done(std::move(end));
  }

  void Cancel() { Finish(matcher_.end()); }

 private:
  void Poll() {
    if (finished_) return;
    const net::HttpUrl& server = impl_.endpoint->server;
    resolver_.async_resolve(server.host, std::to_string(server.port),
                            [self = shared_from_this()](const beast::error_code& ec,
                                                        const tcp::resolver::results_type& r) {
                              if (self->finished_) return;
                              if (ec)
                                return self->Retry("cannot resolve the daemon: " + ec.message());
                              self->Connect(r);
                            });
  }

  void Connect(const tcp::resolver::results_type& addresses) {
    stream_.emplace(impl_.io);
    stream_->expires_after(impl_.http.connect_timeout);
    stream_->async_connect(
        addresses, [self = shared_from_this()](const beast::error_code& ec, const tcp::endpoint&) {
          if (self->finished_) return;
          if (ec) return self->Retry("cannot reach the daemon: " + ec.message());
          self->Send();
        });
  }

  void Send() {
    const client::Endpoint& endpoint = *impl_.endpoint;
    request_line_ = {};
    request_line_.method(http::verb::get);
    request_line_.target(endpoint.base_path +
                         client::DaemonApi::AgentPath(
                             request_.agent, "/events?offset=" + client::PercentEncode(offset_) +
                                                 "&live=long-poll"));
    request_line_.set(http::field::host, net::HostAndPort(endpoint.server));
    request_line_.set(http::field::accept, "application/json");
    request_line_.set(http::field::connection, "close");
    if (!impl_.http.token.empty())
      request_line_.set(http::field::authorization, "Bearer " + impl_.http.token);
    // A long-poll answers within the daemon's long-poll timeout (30 s by default).
    stream_->expires_after(impl_.http.stream_idle_timeout);
    http::async_write(*stream_, request_line_,
                      [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                        if (self->finished_) return;
                        if (ec) return self->Retry("writing to the daemon: " + ec.message());
                        self->Read();
                      });
  }

  void Read() {
    buffer_.clear();
    parser_.emplace();
    parser_->body_limit(impl_.http.max_body_bytes);
    http::async_read(*stream_, buffer_, *parser_,
                     [self = shared_from_this()](const beast::error_code& ec, std::size_t) {
                       if (self->finished_) return;
                       if (ec) return self->Retry("reading from the daemon: " + ec.message());
                       self->OnReply(self->parser_->release());
                     });
  }

  void OnReply(http::response<http::string_body> reply) {
    stream_->close();
    stream_.reset();
    const int status = static_cast<int>(reply.result_int());
    if (status == 200 || status == 204) {
      if (status == 200) {
        Result<std::vector<EventRecord>> records = client::DecodeEnvelopeArray(reply.body());
        if (!records.ok()) return Finish(records.status());
        for (const EventRecord& record : *records)
          if (seen_.Admit(record.cursor()) && matcher_.Ended(record)) return Finish(matcher_.end());
      }
      if (auto next = reply.find("Stream-Next-Offset"); next != reply.end())
        offset_ = std::string(next->value());
      backoff_ = kFirstBackoff;
      return Poll();
    }
    const bool permanent = status >= 400 && status < 500 && status != 408 && status != 429;
    Result<boost::json::value> body = api::ParseJson(reply.body());
    const Status error = body.ok() ? api::ErrorFromJson(*body, status)
                                   : Error(ErrorCode::kInternal, "HTTP " + std::to_string(status));
    if (permanent) return Finish(Error(error.code(), "daemon: " + error.ToString()));
    Retry("daemon: " + error.ToString());
  }

  // Reads again after the back-off (the reason is not kept: the wait goes on until its deadline).
  void Retry(const std::string& /*why*/) {
    if (stream_) stream_->close();
    stream_.reset();
    pause_.expires_after(backoff_);
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
    pause_.async_wait([self = shared_from_this()](const beast::error_code& ec) {
      if (!ec) self->Poll();
    });
  }

  Impl& impl_;
  const std::uint64_t id_;
  const TurnWaitRequest request_;
  Done done_;
  client::TurnEndMatcher matcher_;
  client::CursorDeduper seen_;  // a read after a reset may repeat events
  std::string offset_;
  std::chrono::milliseconds backoff_ = kFirstBackoff;
  asio::steady_timer deadline_, pause_;
  tcp::resolver resolver_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;
  http::request<http::empty_body> request_line_;
  std::optional<http::response_parser<http::string_body>> parser_;
  bool finished_ = false;
};

TurnWaiter::TurnWaiter(const client::TransportOptions& http) : impl_(std::make_shared<Impl>(http)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

TurnWaiter::~TurnWaiter() {
  asio::post(impl_->io, [impl = impl_.get()] {
    while (!impl->waits.empty()) {
      std::shared_ptr<Wait> wait = impl->waits.begin()->second;
      wait->Cancel();  // erases itself
    }
  });
  impl_->work.reset();
  impl_->thread.join();
}

std::uint64_t TurnWaiter::Start(TurnWaitRequest request, Done done) {
  const std::uint64_t id = impl_->next_id++;
  ++impl_->open;
  asio::post(impl_->io, [impl = impl_.get(), id, request = std::move(request),
                         done = std::move(done)]() mutable {
    auto wait = std::make_shared<Wait>(*impl, id, std::move(request), std::move(done));
    impl->waits[id] = wait;
    wait->Begin();
  });
  return id;
}

void TurnWaiter::Cancel(std::uint64_t id) {
  asio::post(impl_->io, [impl = impl_.get(), id] {
    auto it = impl->waits.find(id);
    if (it == impl->waits.end()) return;
    std::shared_ptr<Wait> wait = it->second;
    wait->Cancel();
  });
}

std::size_t TurnWaiter::open() const { return impl_->open.load(); }

}  // namespace agentstream::mcp_server

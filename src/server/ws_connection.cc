// The Beast transport of /ws: the upgraded connection, its bounded write queue and timers; the
// protocol itself is WsApp (ws_app.h).
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <list>

#include "server/server_internal.h"
#include "server/ws_app.h"

namespace agentstream::server::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

namespace {

class WsConnection final : public WsOutput, public std::enable_shared_from_this<WsConnection> {
 public:
  WsConnection(ServerContext& ctx, ServerStream stream) : ctx_(ctx), ws_(std::move(stream)) {
    ctx_.metrics.WebSocketOpened();
  }
  ~WsConnection() override { ctx_.metrics.WebSocketClosed(); }

  void Run(const http::request<http::string_body>& request, const std::string& device_id) {
    if (!device_id.empty()) {
      // A revoked device's WebSocket is closed (policy violation), and its socket shortly after
      // if the client does not answer the close.
      device_registration_ = ctx_.device_connections->Add(
          device_id, [weak = weak_from_this(), executor = ws_.get_executor()] {
            asio::post(executor, [weak] {
              if (auto self = weak.lock()) self->Revoked();
            });
          });
      if (!device_registration_.active()) return;  // over the bound: dropped
    }
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [tls = ws_.next_layer().tls()](websocket::response_type& res) {
          res.set(http::field::server, "agentstream");
          if (tls) res.set(kHstsHeader, kHstsValue);
        }));
    ws_.read_message_max(ctx_.options.ws.max_message_bytes);
    std::weak_ptr<WsConnection> weak = weak_from_this();
    auto executor = ws_.get_executor();
    Poster post = [weak, executor](std::function<void()> fn) {
      auto self = weak.lock();
      if (!self) return;
      asio::post(executor, [self, fn = std::move(fn)] {
        if (!self->closed_) fn();
      });
    };
    app_ = std::make_shared<WsApp>(ctx_.agents, ctx_.log, *ctx_.timeline, *ctx_.hub, ctx_.metrics,
                                   *this, std::move(post), ctx_.options.ws, ctx_.options.workspaces,
                                   ctx_.options.schedules);
    app_->SetPresenceDevice(device_id);
    ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->app_->Start();
      self->Read();
    });
  }

  void Send(std::string head, std::shared_ptr<const std::string> shared,
            std::string tail) override {
    if (closed_ || closing_) return;
    queue_.Push(Frame{std::move(head), std::move(shared), std::move(tail)});
    if (!queue_.writing) WriteNext();
  }

  std::size_t queued_bytes() const override { return queue_.bytes; }

  void Close(std::string reason) override {
    CloseWith(websocket::close_code::try_again_later, std::move(reason));
  }

  // Closes with `code` after the frame being written; the close frame is built when it is sent,
  // so the code and reason are set first.
  void CloseWith(websocket::close_code code, std::string reason) {
    if (closed_ || closing_) return;
    closing_ = true;
    if (reason.size() > 123) reason.resize(123);  // a close reason fits in a control frame
    close_reason_ = websocket::close_reason(code, reason);
    // Drop what was not started; the close frame follows the frame being written.
    while (queue_.frames.size() > (queue_.writing ? 1u : 0u)) {
      queue_.bytes -= queue_.frames.back().size();
      queue_.frames.pop_back();
    }
    if (!queue_.writing) SendClose();
  }

  void Revoked() {
    if (closed_) return;
    CloseWith(websocket::close_code::policy_error, "device revoked");
    After(std::chrono::milliseconds(500), [self = shared_from_this()] {
      beast::error_code ignored;
      self->ws_.next_layer().socket().close(ignored);
    });
  }

  void After(std::chrono::milliseconds delay, std::function<void()> fn) override {
    auto timer = std::make_shared<asio::steady_timer>(ws_.get_executor(), delay);
    timers_.push_back(timer);
    timer->async_wait([weak = weak_from_this(), timer, fn = std::move(fn)](beast::error_code ec) {
      auto self = weak.lock();
      if (!self || ec || self->closed_) return;
      self->timers_.remove(timer);
      fn();
    });
  }

 private:
  void Read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->Finish();
      const std::string text = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      if (!self->ws_.got_text()) {
        self->app_->OnBinaryMessage();
      } else {
        self->app_->OnMessage(text);
      }
      if (!self->closed_) self->Read();
    });
  }

  void WriteNext() {
    if (queue_.frames.empty()) {
      queue_.writing = false;
      if (closing_) SendClose();
      return;
    }
    queue_.writing = true;
    const Frame& f = queue_.frames.front();
    std::array<asio::const_buffer, 3> buffers{
        asio::buffer(f.head), f.shared ? asio::buffer(*f.shared) : asio::const_buffer(),
        asio::buffer(f.tail)};
    ws_.text(true);
    ws_.async_write(buffers, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->queue_.PopFront();
      if (ec) return self->Finish();
      self->ctx_.metrics.FramesSent(0);
      if (!self->closing_) self->app_->OnWritten();
      self->WriteNext();
    });
  }

  void SendClose() {
    ws_.async_close(close_reason_,
                    [self = shared_from_this()](beast::error_code) { self->Finish(); });
  }

  void Finish() {
    if (closed_) return;
    closed_ = true;
    for (auto& timer : timers_) timer->cancel();
    timers_.clear();
    if (app_) app_->Shutdown();
  }

  ServerContext& ctx_;
  websocket::stream<ServerStream> ws_;
  beast::flat_buffer buffer_;
  std::shared_ptr<WsApp> app_;
  FrameQueue queue_;
  std::list<std::shared_ptr<asio::steady_timer>> timers_;
  websocket::close_reason close_reason_;
  bool closing_ = false;
  bool closed_ = false;
  DeviceConnections::Registration device_registration_;  // the device's, "" for the owner
};

}  // namespace

void StartWebSocket(ServerContext& ctx, ServerStream stream,
                    const http::request<http::string_body>& request, const std::string& device_id) {
  std::make_shared<WsConnection>(ctx, std::move(stream))->Run(request, device_id);
}

}  // namespace agentstream::server::internal

// The Beast transport of the HTTP surface: the listener, and the connection's keep-alive request
// loop, access control and dispatch (http_connection.h). Durable Stream requests and the live
// reads of a session's events are handed to a stream exchange (stream_http.cc).
#include "server/http_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "devices/device_service.h"
#include "log/log.h"
#include "server/http_connection.h"
#include "server/server_internal.h"
#include "server/session_live_source.h"
#include "server/static_files.h"

namespace agentstream::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using internal::HttpConnection;
using internal::ServerContext;

std::string internal::RemoteAddress(const tcp::socket& socket) {
  beast::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  return ec ? std::string() : peer.address().to_string();
}

void internal::LogRequest(std::string_view method, std::string_view route, int status,
                          std::string_view client_address, std::string_view peer,
                          std::string_view device) {
  if (!log::Enabled(log::Level::kDebug)) return;
  std::vector<log::Field> fields{{"method", method},
                                 {"route", route.empty() ? "other" : route},
                                 {"status", status},
                                 {"client", client_address}};
  if (client_address != peer && CanonicalAddress(peer) != client_address)
    fields.push_back({"proxy", peer});
  if (!device.empty()) fields.push_back({"device", device});
  log::Write(log::Level::kDebug, "server.request", fields);
}

namespace {

using internal::RemoteAddress;

std::string Header(const http::request<http::string_body>& req, http::field field) {
  auto it = req.find(field);
  return it == req.end() ? std::string() : std::string(it->value());
}

// The Transfer-Encoding header of a request head, its lines joined; nullopt when absent.
std::optional<std::string> TransferEncoding(const http::request_header<>& head) {
  auto [it, end] = head.equal_range(http::field::transfer_encoding);
  if (it == end) return std::nullopt;
  std::string joined;
  for (; it != end; ++it) {
    if (!joined.empty()) joined += ',';
    joined += it->value();
  }
  return joined;
}

// The first read of an idle keep-alive connection's next request.
constexpr std::size_t kFirstReadBytes = 4096;

// Closing with unread request bytes (a refused oversized body) would make the kernel reset the
// connection, which can destroy the response before the client read it. So: stop sending, then
// read and discard what the client still sends, up to kMaxDrainBytes or kDrainTimeout, then close.
constexpr std::size_t kMaxDrainBytes = std::size_t{32} << 20;
constexpr std::chrono::seconds kDrainTimeout{2};

}  // namespace

namespace internal {

void HttpConnection::Begin() {
  if (!first_request_ || !stream_.tls()) return ReadRequest();
  stream_.expires_after(ctx_.options.tls_handshake_timeout);
  stream_.AsyncHandshake([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;  // not TLS, refused by either side, or too slow: closed
    self->ReadRequest();
  });
}

void HttpConnection::ReadRequest() {
  if (!slot_.Acquire(*ctx_.waiting, address_)) return Close();  // max_waiting_per_address
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(ctx_.options.max_header_bytes));
  parser_->body_limit(ctx_.options.max_body_bytes);
  if (first_request_ || buffer_.size() > 0) {
    first_request_ = false;
    return ReadHead();
  }
  // Idle between requests: the next request's head deadline starts at its first byte.
  stream_.expires_after(ctx_.options.idle_timeout);
  stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                          [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                            if (ec) return;  // closed, or idle for too long
                            self->buffer_.commit(n);
                            self->ReadHead();
                          });
}

void HttpConnection::ReadHead() {
  stream_.expires_after(ctx_.options.request_head_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            if (ec) return self->OnReadError(ec);
                            self->OnHead();
                          });
}

void HttpConnection::OnHead() {
  const http::request_header<>& head = parser_->get();
  const std::optional<std::string> transfer_encoding = TransferEncoding(head);
  if (auto refused = CheckFraming(transfer_encoding, head.version())) {
    request_ = {};
    request_.version(head.version());
    return Deny(refused->status, refused->status == 501 ? "not_implemented" : "invalid_argument",
                refused->message);
  }
  if (parser_->is_done()) return OnMessage();
  stream_.expires_after(ctx_.options.idle_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                     if (ec) return self->OnReadError(ec);
                     self->OnMessage();
                   });
}

void HttpConnection::OnMessage() {
  request_ = parser_->release();
  slot_.Release();  // answering now, no longer waiting
  OnRequest();
}

void HttpConnection::OnReadError(beast::error_code ec) {
  request_ = {};
  if (ec == http::error::body_limit || ec == http::error::header_limit)
    return Deny(413, "too_large", "request larger than the limit");
  // A malformed request is answered before closing; a peer gone or a deadline passed is not.
  const bool malformed = ec.category() == make_error_code(http::error::bad_method).category() &&
                         ec != http::error::end_of_stream && ec != http::error::partial_message;
  if (malformed) return Deny(400, "invalid_argument", "malformed request: " + ec.message());
}

void HttpConnection::Close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
}

void HttpConnection::Deny(int status, const std::string& code, const std::string& message) {
  Respond(CodedErrorResponse(status, code, message), /*keep_alive=*/false);
}

Status HttpConnection::Resolve(HttpRequest& req) {
  req.remote_address = address_;
  ForwardedInput input;
  input.peer = address_;
  input.tls = stream_.tls();
  input.host = req.host;
  for (auto [lines, name] : {std::pair{&input.forwarded_for, "x-forwarded-for"},
                             std::pair{&input.forwarded_proto, "x-forwarded-proto"},
                             std::pair{&input.forwarded_host, "x-forwarded-host"}}) {
    for (auto [it, end] = request_.equal_range(name); it != end; ++it)
      lines->push_back(it->value());
  }
  AS_ASSIGN_OR_RETURN(EffectiveRequest effective,
                      ResolveForwarded(ctx_.options.trusted_proxies, input));
  req.scheme = std::move(effective.scheme);
  req.effective_host = std::move(effective.host);
  req.client_address = std::move(effective.client_address);
  client_address_ = req.client_address;
  forwarded_ = effective.forwarded;
  return Status::Ok();
}

internal::ResolvedRequest HttpConnection::Resolved(const HttpRequest& req) const {
  // Through a trusted proxy, absolute URLs name the origin its client used, unless the daemon
  // was given its public URL.
  std::string base_url = ctx_.base_url;
  if (forwarded_ && ctx_.options.public_url.empty()) {
    if (std::string origin = OriginOf(req.scheme, req.effective_host); !origin.empty())
      base_url = std::move(origin);
  }
  return {std::move(base_url), req.client_address, req.device_id, address_};
}

std::optional<HttpResponse> HttpConnection::AdmitDevice(HttpRequest& req,
                                                        std::string_view query_token) {
  auto refused =
      ctx_.device_routes->Admit(req, query_token, Header(request_, http::field::user_agent));
  if (refused || req.device_id.empty()) return refused;
  device_id_ = req.device_id;
  if (!device_registration_.active()) {
    std::weak_ptr<HttpConnection> weak = weak_from_this();
    device_registration_ =
        ctx_.device_connections->Add(device_id_, [weak, executor = stream_.get_executor()] {
          asio::post(executor, [weak] {
            auto self = weak.lock();
            if (!self) return;
            self->revoked_ = true;
            if (!self->answering_) self->Close();
          });
        });
    if (!device_registration_.active())
      return CodedErrorResponse(503, "unavailable", "too many open connections of devices");
  }
  return std::nullopt;
}

void HttpConnection::OnRequest() {
  route_.clear();
  client_address_ = address_;
  forwarded_ = false;
  device_id_.clear();
  answering_ = true;
  HttpRequest req;
  if (!ParseRequest(req)) return;
  route_ = ApiRouter::RouteOf(req);
  const bool stream_path = ctx_.options.streams != nullptr && req.path.rfind("/v1/stream/", 0) == 0;
  // A CORS preflight carries no credentials and changes nothing: any origin may ask.
  if (stream_path && req.method == "OPTIONS") {
    device_registration_.Reset();  // the stream goes to the exchange
    return internal::StartStreamExchange(ctx_, std::move(stream_), std::move(buffer_),
                                         std::move(request_), Resolved(req));
  }
  if (!Admit(req)) return;
  Dispatch(req, stream_path);
}

// The request line and the headers every check reads. False when the request was refused.
bool HttpConnection::ParseRequest(HttpRequest& req) {
  req.method = std::string(request_.method_string());
  // The Host allow-list comes first: a page of another site rebound to this address is refused
  // before anything else is looked at (security.h).
  req.host = Header(request_, http::field::host);
  if (request_.count(http::field::host) > 1) {
    Deny(400, "invalid_argument", "more than one Host header");
    return false;
  }
  if (req.host.empty() && request_.version() >= 11) {
    Deny(400, "invalid_argument", "an HTTP/1.1 request needs a Host header");
    return false;
  }
  // The scheme, Host and client as a trusted proxy forwarded them (forwarded.h), else the
  // connection's own; every check below reads these.
  if (Status resolved = Resolve(req); !resolved.ok()) {
    Deny(400, "invalid_argument", resolved.message());
    return false;
  }
  if (!req.effective_host.empty() && !HostAllowed(ctx_.options.security, req.effective_host)) {
    Deny(403, "forbidden",
         "misdirected host " + req.effective_host +
             ": not a name of this daemon (serve --allow-host adds one)");
    return false;
  }
  if (!ParseTarget(request_.target(), &req.path, &req.query)) {
    Deny(400, "invalid_argument", "malformed request target");
    return false;
  }
  // Which of several Origin headers a check should read is unknown (a proxy may read another):
  // refused as a foreign one is.
  if (request_.count(http::field::origin) > 1) {
    Deny(403, "forbidden", "more than one Origin header");
    return false;
  }
  req.origin = Header(request_, http::field::origin);
  req.authorization = Header(request_, http::field::authorization);
  for (std::string_view name : kForwardedHeaders) {
    if (auto it = request_.find(name); it != request_.end())
      req.headers.emplace_back(name, std::string(it->value()));
  }
  return true;
}

// Access: the owner's token, a paired device's, a pairing exchange or an inbox delivery; the
// page's public assets are answered here. False when the request was answered.
bool HttpConnection::Admit(HttpRequest& req) {
  const auto token = req.query.find("token");
  // A page served through this same scheme and host (a proxy's https://NAME) is not cross-site.
  const bool same_origin = req.origin == OriginOf(req.scheme, req.effective_host);
  Access access = CheckAccess(
      ctx_.options.security, req.authorization, token == req.query.end() ? "" : token->second,
      same_origin ? std::string_view() : std::string_view(req.origin), req.client_address);
  if (access == Access::kForbiddenOrigin) {
    Deny(403, "forbidden", "origin " + req.origin + " is not allowed");
    return false;
  }
  // The page's assets are public; the page passes the token it was opened with to the API.
  if (IsStaticRequest(req.method, req.path) && !beast::websocket::is_upgrade(request_)) {
    Respond(
        ServeStatic(ctx_.options.web_root, req.path, Header(request_, http::field::if_none_match)));
    return false;
  }
  // Not the owner: a paired device's token, or a pairing exchange, which needs no credential.
  if (access == Access::kUnauthorized && ctx_.device_routes != nullptr) {
    if (auto refused = AdmitDevice(req, token == req.query.end() ? "" : token->second)) {
      Respond(std::move(*refused), /*keep_alive=*/false);
      return false;
    }
    if (!req.device_id.empty() || IsPairingExchange(req)) access = Access::kAllowed;
  }
  // An inbox delivery is authenticated by its signature (inbox.h), not by the daemon's token.
  // So is a trigger's delivery that carries its signature (trigger_routes.h).
  if (access == Access::kUnauthorized && !IsInboxDelivery(req) && !IsTriggerDelivery(req)) {
    Deny(401, "unauthorized",
         ctx_.options.security.token.empty()
             ? "a client a trusted proxy forwards from another machine needs a credential, "
               "and this daemon has no --token (docs/operations.md, \"Behind a reverse "
               "proxy\")"
             : "a valid bearer token is required");
    return false;
  }
  return true;
}

// Hands an admitted request to its handler: a stream exchange, the WebSocket, a live read of a
// session's events, /mcp, the devices' routes or the API router.
void HttpConnection::Dispatch(HttpRequest& req, bool stream_path) {
  if (stream_path && !beast::websocket::is_upgrade(request_)) {
    device_registration_.Reset();  // the exchange registers itself
    return internal::StartStreamExchange(ctx_, std::move(stream_), std::move(buffer_),
                                         std::move(request_), Resolved(req));
  }
  if (beast::websocket::is_upgrade(request_)) {
    if (req.path != "/ws") return Deny(404, "not_found", "WebSocket upgrades only at /ws");
    ctx_.metrics.Request("/ws", 101);
    internal::LogRequest(req.method, "/ws", 101, client_address_, address_, device_id_);
    stream_.expires_never();
    device_registration_.Reset();  // the WebSocket registers itself
    return internal::StartWebSocket(ctx_, std::move(stream_), request_, device_id_);
  }
  req.body = std::move(request_.body());
  std::vector<std::string> seg = PathSegments(req.path);
  if (req.method == "GET" && seg.size() == 4 && seg[0] == "v1" && seg[1] == "agents" &&
      seg[3] == "events") {
    auto query = ResolveEventsQuery(ctx_.log, SessionId(seg[2]), req);
    if (!query.ok()) return Respond(ErrorResponse(query.status()));
    if (query->live != LiveMode::kNone) {
      device_registration_.Reset();  // the live read registers itself
      auto source = OpenSessionLiveSource(
          ctx_.log, *ctx_.hub, ctx_.metrics, std::move(*query),
          {ctx_.options.batch, ctx_.options.sse_keepalive, ctx_.options.max_queue_bytes});
      return internal::StartLiveRead(ctx_, std::move(stream_), std::move(buffer_),
                                     std::move(request_), Resolved(req), route_, std::move(source));
    }
  }
  auto reply = [self = shared_from_this()](HttpResponse response) {
    asio::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
      self->Respond(std::move(response));
    });
  };
  if (req.path == "/mcp" && ctx_.options.mcp) return ctx_.options.mcp(req, std::move(reply));
  // Off this I/O thread: a request that waits on the store holds up no other connection.
  asio::post(*ctx_.requests, [&ctx = ctx_, req = std::move(req), seg = std::move(seg),
                              user_agent = Header(request_, http::field::user_agent),
                              reply = std::move(reply)]() mutable {
    if (ctx.device_routes != nullptr && ctx.device_routes->Handle(req, seg, user_agent, reply))
      return;
    ctx.router->Handle(req, std::move(reply));
  });
}

void HttpConnection::Respond(HttpResponse response, bool keep_alive) {
  ctx_.metrics.Request(route_.empty() ? "other" : route_, response.status);
  internal::LogRequest(request_.method_string(), route_, response.status, client_address_, address_,
                       device_id_);
  auto res = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(response.status), request_.version() ? request_.version() : 11);
  res->set(http::field::server, "agentstream");
  res->set(http::field::content_type, response.content_type);
  res->set("X-Content-Type-Options", "nosniff");
  if (stream_.tls()) res->set(internal::kHstsHeader, internal::kHstsValue);
  for (const auto& [name, value] : response.headers) {
    if (IsSafeHeaderValue(value)) res->set(name, value);
  }
  res->body() = std::move(response.body);
  // Staying open is waiting for the next request: the client's address must have a place for
  // that (max_waiting_per_address), else the answer says the connection closes.
  res->keep_alive(keep_alive && !revoked_ && request_.keep_alive() &&
                  slot_.Acquire(*ctx_.waiting, address_));
  res->prepare_payload();
  stream_.expires_after(ctx_.options.idle_timeout);
  http::async_write(stream_, *res,
                    [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
                      if (ec) return;
                      self->answering_ = false;
                      if (!res->keep_alive()) return self->LingeringClose();
                      self->ReadRequest();
                    });
}

void HttpConnection::LingeringClose() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(kDrainTimeout);
  Drain(std::make_shared<std::array<char, 16384>>(), 0);
}

void HttpConnection::Drain(std::shared_ptr<std::array<char, 16384>> chunk, std::size_t drained) {
  const asio::mutable_buffer space = asio::buffer(*chunk);
  stream_.async_read_some(space, [self = shared_from_this(), chunk = std::move(chunk), drained](
                                     beast::error_code ec, std::size_t n) mutable {
    if (ec || drained + n > kMaxDrainBytes) return;  // then closed
    self->Drain(std::move(chunk), drained + n);
  });
}

void ResumeHttp(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                AddressSlot slot, std::string peer) {
  std::make_shared<HttpConnection>(ctx, std::move(stream), std::move(buffer), std::move(slot),
                                   std::move(peer))
      ->Run();
}

}  // namespace internal

struct Server::Impl {
  explicit Impl(runtime::AgentManager& agents, EventLog& log, ServerOptions options)
      : ctx{agents, log, std::move(options), {}, nullptr, nullptr, nullptr} {
    for (int i = 0; i < std::max(1, ctx.options.threads); ++i) {
      ios.push_back(std::make_unique<asio::io_context>(1));
      work.push_back(asio::make_work_guard(*ios.back()));
    }
  }

  // Connections are dealt to the I/O threads in turn. Each thread runs its own io_context, so a
  // connection's handlers never run concurrently (no strand needed) and the threads never
  // contend for one scheduler's lock, which the journal's commit notifications also take.
  asio::io_context& NextIo() { return *ios[next_io++ % ios.size()]; }

  void Accept() {
    acceptor->async_accept(NextIo(), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
      if (!ec && ctx.metrics.connections_open() >= ctx.options.max_connections) {
        socket.close(ec);  // over the connection bound: refuse at once
      } else if (!ec) {
        // Live frames are small and latency matters more than packet count: no Nagle delay.
        socket.set_option(tcp::no_delay(true), ec);
        beast::tcp_stream tcp_stream(std::move(socket));
        std::make_shared<HttpConnection>(
            ctx, ctx.tls ? internal::ServerStream(ctx.tls->Current(), std::move(tcp_stream))
                         : internal::ServerStream(std::move(tcp_stream)))
            ->Run();
      }
      Accept();
    });
  }

  // Every tls_reload_interval: the certificate's files are read again when they changed.
  void WatchTls() {
    tls_timer->expires_after(ctx.options.tls_reload_interval);
    tls_timer->async_wait([this](beast::error_code ec) {
      if (ec) return;
      ctx.tls->Reload(/*force=*/false);
      WatchTls();
    });
  }

  ServerContext ctx;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool stopped = false;
  std::size_t next_io = 0;      // used by the accept handler only
  int revocation_listener = 0;  // of options.devices, while started
  // Declared last, destroyed first: pending handlers (holding connections, which hold hub
  // tokens) are destroyed while the hub still exists. ios[0] also runs the acceptor and the hub.
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> tls_timer;  // on ios[0], with TLS only
  std::optional<asio::strand<asio::io_context::executor_type>> hub_strand;
};

Server::Server(runtime::AgentManager& agents, EventLog& log, ServerOptions options)
    : impl_(std::make_unique<Impl>(agents, log, std::move(options))) {}

Server::~Server() {
  Stop();
  impl_->acceptor.reset();
}

Status Server::Start() {
  Impl& s = *impl_;
  ServerOptions& o = s.ctx.options;
  AS_RETURN_IF_ERROR(CheckBind(o.host, o.security.token));
  AS_RETURN_IF_ERROR(CheckTlsOptions(o.tls_cert_file, o.tls_key_file));
  if (!o.tls_cert_file.empty()) {
    AS_ASSIGN_OR_RETURN(s.ctx.tls,
                        internal::TlsCertificates::Load(o.tls_cert_file, o.tls_key_file));
  }
  beast::error_code ec;
  const auto address = asio::ip::make_address(o.host == "localhost" ? "127.0.0.1" : o.host, ec);
  if (ec) return Error(ErrorCode::kInvalidArgument, "bad listen address " + o.host);
  s.acceptor.emplace(*s.ios[0]);
  const tcp::endpoint endpoint(address, o.port);
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Error(ErrorCode::kUnavailable,
                 "cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  s.port = s.acceptor->local_endpoint().port();
  if (o.security.allowed_origins.empty()) o.security.allowed_origins = SameHostOrigins(s.port);
  const bool wildcard = address.is_unspecified();
  o.security.allowed_hosts.push_back(o.host);
  o.security.allow_ip_literal_hosts = o.security.allow_ip_literal_hosts || wildcard;
  s.ctx.waiting = std::make_unique<AddressLimiter>(o.max_waiting_per_address);
  s.ctx.base_url = o.public_url;
  if (s.ctx.base_url.empty()) {
    const std::string host = wildcard ? "127.0.0.1" : o.host;
    const bool v6 = host.find(':') != std::string::npos;
    s.ctx.base_url = std::string(scheme()) + "://" + (v6 ? "[" + host + "]" : host) + ":" +
                     std::to_string(s.port);
  }
  while (!s.ctx.base_url.empty() && s.ctx.base_url.back() == '/') s.ctx.base_url.pop_back();
  o.ws.max_queue_bytes = std::min(o.ws.max_queue_bytes, o.max_queue_bytes);
  Impl* impl = impl_.get();
  // Commits are processed one at a time (a strand), whatever the number of I/O threads.
  s.hub_strand.emplace(asio::make_strand(*s.ios[0]));
  s.ctx.hub = std::make_unique<Hub>(
      s.ctx.log, [impl](std::function<void()> fn) { asio::post(*impl->hub_strand, std::move(fn)); },
      o.batch);
  s.ctx.requests =
      std::make_unique<asio::thread_pool>(static_cast<std::size_t>(std::max(1, o.request_threads)));
  s.ctx.timeline = std::make_unique<TimelineService>(s.ctx.log);
  s.ctx.consumer_routes = std::make_unique<ConsumerRoutes>(o.consumers, o.inbox);
  s.ctx.router =
      std::make_unique<ApiRouter>(s.ctx.agents, s.ctx.log, *s.ctx.timeline, s.ctx.metrics,
                                  *s.ctx.hub, o.batch, s.ctx.consumer_routes.get(), o.workspaces,
                                  o.notify_routes, o.catalog, o.triggers, o.schedules);
  if (o.devices != nullptr) {
    s.ctx.device_routes = std::make_unique<DeviceRoutes>(*o.devices, o.pairing_public_url);
    s.ctx.device_connections = std::make_unique<DeviceConnections>(o.max_connections);
    DeviceConnections* connections = s.ctx.device_connections.get();
    s.revocation_listener = o.devices->AddRevocationListener(
        [connections](const std::string& device) { connections->CloseDevice(device); });
  }
  s.Accept();
  if (s.ctx.tls) {
    s.tls_timer.emplace(*s.ios[0]);
    s.WatchTls();
  }
  for (auto& io : s.ios) s.threads.emplace_back([io = io.get()] { io->run(); });
  return Status::Ok();
}

std::uint16_t Server::port() const { return impl_->port; }

const char* Server::scheme() const { return impl_->ctx.tls ? "https" : "http"; }

void Server::ReloadTls() {
  if (impl_->ctx.tls) impl_->ctx.tls->Reload(/*force=*/true);
}

Status CheckTlsOptions(const std::string& cert_file, const std::string& key_file) {
  if (cert_file.empty() && key_file.empty()) return Status::Ok();
  if (cert_file.empty() || key_file.empty())
    return Error(ErrorCode::kInvalidArgument,
                 "--tls-cert and --tls-key go together: give both (TLS) or neither");
  return internal::MakeServerTlsContext(cert_file, key_file).status();
}

Metrics& Server::metrics() { return impl_->ctx.metrics; }

void Server::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return;
  s.stopped = true;
  if (s.revocation_listener != 0)
    s.ctx.options.devices->RemoveRevocationListener(s.revocation_listener);
  if (s.ctx.hub) s.ctx.hub->Stop();
  for (auto& io : s.ios) io->stop();
  for (std::thread& t : s.threads) t.join();
  s.threads.clear();
  // The requests under way finish; their answers go to stopped I/O threads and are dropped.
  if (s.ctx.requests) s.ctx.requests->join();
  if (s.acceptor) {
    beast::error_code ignored;
    s.acceptor->close(ignored);
  }
}

}  // namespace agentstream::server

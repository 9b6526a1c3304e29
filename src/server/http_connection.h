// Internal to src/server: one HTTP/1.1 connection of the daemon (http_server.cc): its request
// loop, access control and dispatch. A Durable Stream request or a live read of a session's
// events is handed to a stream exchange (stream_http.cc), a WebSocket upgrade to the WebSocket
// connection. Includes Beast; only http_server.cc includes it.
#pragma once

#include <array>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <memory>
#include <optional>
#include <string>

#include "server/server_internal.h"

namespace agentstream::server::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  // A new connection: its TLS handshake (on a TLS stream) must be done within
  // tls_handshake_timeout, then its first request head must arrive within request_head_timeout.
  HttpConnection(ServerContext& ctx, ServerStream stream)
      : ctx_(ctx),
        stream_(std::move(stream)),
        address_(RemoteAddress(stream_.socket())),
        client_address_(address_),
        first_request_(true) {
    ctx_.metrics.ConnectionOpened();
  }
  // A connection handed back after a stream exchange, with the bytes it already read, the place
  // of its address it holds for its next request, and that address.
  HttpConnection(ServerContext& ctx, ServerStream stream, beast::flat_buffer buffer,
                 AddressSlot slot, std::string address)
      : ctx_(ctx),
        stream_(std::move(stream)),
        buffer_(std::move(buffer)),
        address_(std::move(address)),
        client_address_(address_),
        slot_(std::move(slot)),
        first_request_(false) {
    ctx_.metrics.ConnectionOpened();
  }
  ~HttpConnection() { ctx_.metrics.ConnectionClosed(); }

  void Run() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Begin(); });
  }

 private:
  void Begin();
  void ReadRequest();
  void ReadHead();
  void OnHead();
  void OnMessage();
  void OnReadError(beast::error_code ec);
  void Close();
  void OnRequest();
  bool ParseRequest(HttpRequest& req);
  bool Admit(HttpRequest& req);
  void Dispatch(HttpRequest& req, bool stream_path);
  Status Resolve(HttpRequest& req);
  // The device check (DeviceRoutes::Admit); registers the connection of an admitted device.
  std::optional<HttpResponse> AdmitDevice(HttpRequest& req, std::string_view query_token);
  internal::ResolvedRequest Resolved(const HttpRequest& req) const;
  void Respond(HttpResponse response, bool keep_alive = true);
  void Deny(int status, const std::string& code, const std::string& message);
  void LingeringClose();
  void Drain(std::shared_ptr<std::array<char, 16384>> chunk, std::size_t drained);

  ServerContext& ctx_;
  ServerStream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  std::string route_;
  // Waiting for or reading a request holds one of the client address's places.
  const std::string address_;
  std::string client_address_;  // the effective client of the current request (forwarded.h)
  bool forwarded_ = false;      // the current request came through a trusted proxy
  std::string device_id_;       // the paired device of the current request, "" for the owner
  // Closes the connection when its device is revoked (device_connections.h): a live read at
  // once, a request being answered after its answer (a device revoking itself gets it).
  DeviceConnections::Registration device_registration_;
  bool answering_ = false;  // between a request and the write of its answer
  bool revoked_ = false;    // the device was revoked: no further request on this connection
  AddressSlot slot_;
  bool first_request_;  // no request read yet: the head's deadline runs from the accept
};

}  // namespace agentstream::server::internal

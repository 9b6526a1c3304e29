// The client's only Asio/Beast translation unit, and the project's only TLS one (Asio's TLS
// implementation is compiled here). Each call runs on a private io_context; the stream's expiry
// bounds the whole exchange, TLS handshake included.
#include "net/http_client.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/impl/src.hpp>  // Asio's TLS implementation: compiled here only
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <exception>
#include <utility>
#include <vector>

#include "core/ascii.h"

namespace agentstream::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// One asynchronous operation in flight: whether its handler ran, and with which error.
struct Pending {
  beast::error_code result;
  bool done = false;
};

// Begins the operation `start` starts, with a handler that records its end in `op`, and readies
// `ioc` to run it. `op` must outlive the operation.
template <class Start>
void Begin(asio::io_context& ioc, Pending& op, Start&& start) {
  start([&op](beast::error_code ec, auto&&...) {
    op.result = ec;
    op.done = true;
  });
  ioc.restart();
}

// Runs one asynchronous operation on `ioc` until its handler ran.
template <class Start>
beast::error_code Await(asio::io_context& ioc, Start&& start) {
  Pending op;
  Begin(ioc, op, std::forward<Start>(start));
  while (!op.done && ioc.run_one() > 0) {
  }
  return op.done ? op.result : asio::error::operation_aborted;
}

// Runs `ioc` until the operation `start` begins has finished. When `stop` turns true meanwhile,
// closes `stream` once (so the operation ends with an error) and sets `stopped`.
template <class Stream, class Start>
beast::error_code AwaitOrStop(asio::io_context& ioc, Stream& stream, const std::atomic<bool>& stop,
                              bool& stopped, Start&& start) {
  Pending op;
  Begin(ioc, op, std::forward<Start>(start));
  auto slice = [&] {
    if (!stopped && stop.load()) {
      stopped = true;
      beast::get_lowest_layer(stream).close();
    }
    ioc.run_one_for(std::chrono::milliseconds(100));
    if (ioc.stopped()) ioc.restart();
    return true;
  };
  while (!op.done && slice()) {
  }
  return op.result;
}

// How messages name the peer of `request`.
std::string Peer(const HttpRequest& request) {
  return request.peer.empty() ? request.url : request.peer;
}

// "0.2 s", "60.0 s"; "50 ms" below a tenth of a second or off the tenths.
std::string Seconds(std::chrono::milliseconds ms) {
  const auto count = ms.count();
  if (count < 100 || count % 100 != 0) return std::to_string(count) + " ms";
  return std::to_string(count / 1000) + "." + std::to_string(count / 100 % 10) + " s";
}

Status Unreachable(const HttpRequest& request, const std::string& why) {
  std::string message = "cannot reach " + Peer(request) + ": " + why;
  if (!request.unreachable_hint.empty()) message += " " + request.unreachable_hint;
  return Error(ErrorCode::kUnavailable, std::move(message));
}

// A failure after the connection was made, `during` naming the step.
Status Broken(const HttpRequest& request, const beast::error_code& ec, std::string_view during) {
  if (ec == beast::error::timeout)
    return Error(ErrorCode::kUnavailable,
                 Peer(request) + " did not answer within " + Seconds(request.timeout));
  if (ec == http::error::body_limit)
    return Error(ErrorCode::kTooLarge, "the reply of " + Peer(request) + " is larger than " +
                                           std::to_string(request.max_reply_bytes) + " bytes");
  return Error(ErrorCode::kUnavailable,
               Peer(request) + ": " + std::string(during) + " failed: " + ec.message());
}

http::request<http::string_body> BuildRequest(const HttpRequest& request, const HttpUrl& url) {
  http::request<http::string_body> req;
  req.method_string(request.method);
  req.target(url.target);
  req.version(11);
  req.set(http::field::host, HostAndPort(url));
  req.set(http::field::user_agent, "agentstream");
  req.set(http::field::connection, "close");
  if (!request.body.empty()) req.set(http::field::content_type, request.content_type);
  for (const auto& [name, value] : request.headers) req.set(name, value);
  req.body() = request.body;
  req.prepare_payload();
  return req;
}

// False for loopback, private, shared (100.64/10), link-local, unspecified and multicast
// addresses, IPv4 or IPv6 (an IPv4-mapped IPv6 address is judged as IPv4).
bool IsPublic(const asio::ip::address& address) {
  if (address.is_v6()) {
    const asio::ip::address_v6 v6 = address.to_v6();
    if (v6.is_v4_mapped()) return IsPublic(asio::ip::make_address_v4(asio::ip::v4_mapped, v6));
    const auto bytes = v6.to_bytes();
    const bool unique_local = (bytes[0] & 0xfe) == 0xfc;  // fc00::/7
    return !(v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_site_local() ||
             v6.is_multicast() || unique_local);
  }
  const auto b = address.to_v4().to_bytes();
  return !(b[0] == 0 || b[0] == 10 || b[0] == 127 || (b[0] == 100 && (b[1] & 0xc0) == 64) ||
           (b[0] == 169 && b[1] == 254) || (b[0] == 172 && (b[1] & 0xf0) == 16) ||
           (b[0] == 192 && b[1] == 168) || b[0] >= 224);
}

}  // namespace

std::optional<bool> IsPublicAddressLiteral(std::string_view host) {
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(host, ec);
  if (ec) return std::nullopt;
  return IsPublic(address);
}

namespace {

// The plain or TLS connection of one request.
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The peer's certificate must chain to the system's trust store (or to `ca_file`) and name the
// host (DNS name or IP address, RFC 2818 rules).
Result<asio::ssl::context> TlsContext(const HttpRequest& request, const HttpUrl& url) {
  asio::ssl::context tls(asio::ssl::context::tls_client);
  beast::error_code ec;
  tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                  asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                  asio::ssl::context::no_tlsv1_1);
  tls.set_default_verify_paths(ec);
  if (!request.ca_file.empty()) tls.load_verify_file(request.ca_file, ec);
  if (ec)
    return Error(ErrorCode::kInvalidArgument,
                 "cannot load the trusted certificates " + request.ca_file + ": " + ec.message());
  tls.set_verify_mode(asio::ssl::verify_peer);
  tls.set_verify_callback(asio::ssl::host_name_verification(url.host));
  return tls;
}

// Resolves, connects (with the TLS handshake on a TlsStream) and sends `request` on `stream`.
// Connecting has `connect_timeout`, everything together `timeout`.
template <class Stream>
Status Open(asio::io_context& ioc, Stream& stream, const HttpRequest& request, const HttpUrl& url) {
  const auto deadline = std::chrono::steady_clock::now() + request.timeout;
  const auto connect_limit =
      std::min(request.timeout, request.connect_timeout.value_or(request.timeout));
  beast::get_lowest_layer(stream).expires_after(connect_limit);
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto results = resolver.resolve(url.host, std::to_string(url.port), ec);
  if (ec) return Unreachable(request, ec.message());
  std::vector<tcp::endpoint> endpoints;
  for (const auto& entry : results)
    if (!request.public_addresses_only || IsPublic(entry.endpoint().address()))
      endpoints.push_back(entry.endpoint());
  if (endpoints.empty())
    return Error(ErrorCode::kInvalidArgument,
                 request.url + ": " + url.host + " resolves to no public address");
  ec = Await(ioc, [&](auto handler) {
    beast::get_lowest_layer(stream).async_connect(endpoints, std::move(handler));
  });
  if (ec == beast::error::timeout)
    return Unreachable(request, "no connection within " + Seconds(connect_limit));
  if (ec) return Unreachable(request, ec.message());
  if constexpr (std::is_same_v<Stream, TlsStream>) {
    // Server name indication, for a name (an address is not sent).
    beast::error_code not_address;
    asio::ip::make_address(url.host, not_address);
    if (not_address && SSL_set_tlsext_host_name(stream.native_handle(), url.host.c_str()) != 1)
      return Error(ErrorCode::kInvalidArgument, request.url + ": bad TLS server name");
    ec = Await(ioc, [&](auto handler) {
      stream.async_handshake(asio::ssl::stream_base::client, std::move(handler));
    });
    if (ec == beast::error::timeout)
      return Unreachable(request, "no TLS handshake within " + Seconds(connect_limit));
    if (ec) return Broken(request, ec, "the TLS handshake");
  }
  beast::get_lowest_layer(stream).expires_at(deadline);
  http::request<http::string_body> req = BuildRequest(request, url);
  ec = Await(ioc, [&](auto handler) { http::async_write(stream, req, std::move(handler)); });
  if (ec) return Broken(request, ec, "sending the request");
  return Status::Ok();
}

// Runs `body(stream)` on a connected plain or TLS stream for `request`.
template <class Body>
Result<HttpReply> WithStream(asio::io_context& ioc, const HttpRequest& request, Body&& body) {
  AS_ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(request.url));
  if (!url.tls) {
    beast::tcp_stream stream(ioc);
    if (Status s = Open(ioc, stream, request, url); !s.ok()) return s;
    return body(stream);
  }
  AS_ASSIGN_OR_RETURN(asio::ssl::context tls, TlsContext(request, url));
  TlsStream stream(ioc, tls);
  if (Status s = Open(ioc, stream, request, url); !s.ok()) return s;
  return body(stream);
}

// The status and headers of a reply.
template <class Message>
HttpReply Head(const Message& message) {
  HttpReply reply;
  reply.status = static_cast<int>(message.result_int());
  for (const auto& field : message)
    reply.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  return reply;
}

// Closes the connection after a complete reply. Over TLS no close_notify is awaited: the
// request said `Connection: close` and the reply is whole.
template <class Stream>
void Close(Stream& stream) {
  beast::error_code ignored;
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
}

template <class Stream>
Result<HttpReply> Receive(asio::io_context& ioc, Stream& stream, const HttpRequest& request) {
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(request.max_reply_bytes);
  beast::error_code ec = Await(
      ioc, [&](auto handler) { http::async_read(stream, buffer, parser, std::move(handler)); });
  if (ec) return Broken(request, ec, "reading the reply");
  HttpReply reply = Head(parser.get());
  reply.body = std::move(parser.get().body());
  Close(stream);
  return reply;
}

Result<HttpReply> Send(const HttpRequest& request) {
  asio::io_context ioc{1};
  return WithStream(ioc, request, [&](auto& stream) { return Receive(ioc, stream, request); });
}

template <class Stream>
Result<HttpReply> ReceiveStream(asio::io_context& ioc, Stream& stream, const HttpRequest& request,
                                const StreamReader& reader, const std::atomic<bool>& stop,
                                std::optional<std::chrono::milliseconds> idle_timeout) {
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);  // a stream: each piece goes to on_body, nothing accumulates
  bool stopped = false;
  beast::error_code ec = AwaitOrStop(ioc, stream, stop, stopped, [&](auto handler) {
    http::async_read_header(stream, buffer, parser, std::move(handler));
  });
  if (stopped) return HttpReply{};
  if (ec) return Broken(request, ec, "reading the reply header");
  HttpReply head = Head(parser.get());
  if (reader.on_head && !reader.on_head(head)) return head;
  auto& lowest = beast::get_lowest_layer(stream);
  std::array<char, std::size_t{16} * 1024> piece{};
  while (!parser.is_done()) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    if (idle_timeout) {
      lowest.expires_after(*idle_timeout);
    } else {
      lowest.expires_never();
    }
    // read_some: hand over what arrived instead of waiting for a full piece.
    ec = AwaitOrStop(ioc, stream, stop, stopped, [&](auto handler) {
      http::async_read_some(stream, buffer, parser, std::move(handler));
    });
    if (stopped) return head;
    if (ec == http::error::need_buffer) ec = {};
    const std::size_t n = piece.size() - parser.get().body().size;
    if (n > 0 && !reader.on_body(std::string_view(piece.data(), n))) return head;
    if (ec == http::error::end_of_stream) return head;
    if (ec == beast::error::timeout)
      return Error(ErrorCode::kUnavailable,
                   Peer(request) + " sent nothing for " + Seconds(*idle_timeout));
    if (ec) return Broken(request, ec, "reading the stream");
  }
  return head;
}

Result<HttpReply> Stream(const HttpRequest& request, const StreamReader& reader,
                         const std::atomic<bool>& stop,
                         std::optional<std::chrono::milliseconds> idle_timeout) {
  asio::io_context ioc{1};
  return WithStream(ioc, request, [&](auto& stream) {
    return ReceiveStream(ioc, stream, request, reader, stop, idle_timeout);
  });
}

}  // namespace

Result<HttpReply> SendHttpRequest(const HttpRequest& request) {
  try {
    return Send(request);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, std::string("HTTP client: ") + e.what());
  }
}

Result<HttpReply> StreamHttpGet(const HttpRequest& request, const StreamReader& reader,
                                const std::atomic<bool>& stop,
                                std::optional<std::chrono::milliseconds> idle_timeout) {
  try {
    HttpRequest get = request;
    get.method = "GET";
    get.body.clear();
    // Some servers end an event stream after its first write when the request says close.
    get.headers.emplace_back("Connection", "keep-alive");
    return Stream(get, reader, stop, idle_timeout);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, std::string("HTTP client: ") + e.what());
  }
}

std::string HttpReply::Header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (EqualsIgnoringAsciiCase(key, name)) return value;
  return "";
}

}  // namespace agentstream::net

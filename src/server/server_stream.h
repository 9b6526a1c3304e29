// Internal to src/server: the byte stream of one accepted connection, plain TCP or TLS over TCP
// (--tls-cert / --tls-key), behind one type so that the HTTP, Durable Streams and WebSocket
// connections are written once. Includes Beast; only the Beast files of src/server include it.
#pragma once

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/teardown.hpp>
#include <chrono>
#include <memory>
#include <utility>
#include <variant>

namespace agentstream::server::internal {

// A connection's stream: an AsyncReadStream and AsyncWriteStream that reads and writes either
// the TCP stream itself or TLS records over it. Timeouts (expires_after) are the TCP stream's and
// apply to the TLS records' reads and writes alike. Movable, not copyable; like the stream it
// wraps, one read and one write may be pending at once, from the connection's thread only.
//
// A connection's stream moves from object to object on every Durable Streams request (the HTTP
// connection hands it to an exchange, which hands it back), so moving it moves one pointer: a
// moved Beast stream allocates its state anew, its socket and three timers each re-registered
// (7.5% of the daemon's samples per append in a profile, docs/benchmarks.md). A moved-from
// ServerStream holds nothing and must not be used.
class ServerStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  // Plain TCP.
  explicit ServerStream(boost::beast::tcp_stream tcp)
      : stream_(std::make_unique<Variant>(std::in_place_type<boost::beast::tcp_stream>,
                                          std::move(tcp))) {}
  // TLS with the certificate of `context`, which the stream keeps alive (a reload replaces the
  // server's context for new connections only). The handshake is AsyncHandshake's.
  ServerStream(std::shared_ptr<boost::asio::ssl::context> context, boost::beast::tcp_stream tcp)
      : context_(std::move(context)),
        stream_(
            std::make_unique<Variant>(std::in_place_type<TlsStream>, std::move(tcp), *context_)) {}

  bool tls() const { return std::holds_alternative<TlsStream>(*stream_); }
  executor_type get_executor() { return tcp().get_executor(); }
  // The TCP stream beneath (its timeouts) and its socket (addresses, shutdown, close).
  boost::beast::tcp_stream& tcp() {
    if (auto* tls = std::get_if<TlsStream>(stream_.get())) return tls->next_layer();
    return std::get<boost::beast::tcp_stream>(*stream_);
  }
  boost::asio::ip::tcp::socket& socket() { return tcp().socket(); }
  void expires_after(std::chrono::steady_clock::duration after) { tcp().expires_after(after); }
  void expires_never() { tcp().expires_never(); }

  // The server side of the TLS handshake (within the TCP stream's timeout); completes at once
  // with success on a plain stream.
  template <class Handler>
  void AsyncHandshake(Handler&& handler) {
    if (auto* tls = std::get_if<TlsStream>(stream_.get()))
      return tls->async_handshake(boost::asio::ssl::stream_base::server,
                                  std::forward<Handler>(handler));
    boost::asio::post(get_executor(), [h = std::forward<Handler>(handler)]() mutable {
      h(boost::beast::error_code());
    });
  }

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    std::visit([&](auto& s) { s.async_read_some(buffers, std::forward<Handler>(handler)); },
               *stream_);
  }
  template <class Buffers, class Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    std::visit([&](auto& s) { s.async_write_some(buffers, std::forward<Handler>(handler)); },
               *stream_);
  }

  // Beast's customization points, found by argument-dependent lookup under the names it calls.
  // NOLINTBEGIN(readability-identifier-naming)
  // WebSocket close: the stream beneath's own teardown.
  template <class Handler>
  friend void async_teardown(boost::beast::role_type role, ServerStream& stream,
                             Handler&& handler) {
    using boost::beast::websocket::async_teardown;
    std::visit([&](auto& s) { async_teardown(role, s, std::forward<Handler>(handler)); },
               *stream.stream_);
  }
  friend void teardown(boost::beast::role_type role, ServerStream& stream,
                       boost::beast::error_code& ec) {
    using boost::beast::websocket::teardown;
    std::visit([&](auto& s) { teardown(role, s, ec); }, *stream.stream_);
  }
  // The WebSocket stream's own timeouts close the connection through this.
  friend void beast_close_socket(ServerStream& stream) {
    boost::beast::error_code ignored;
    stream.socket().close(ignored);
  }
  // NOLINTEND(readability-identifier-naming)

 private:
  using Variant = std::variant<boost::beast::tcp_stream, TlsStream>;
  std::shared_ptr<boost::asio::ssl::context> context_;  // null for plain TCP
  std::unique_ptr<Variant> stream_;
};

}  // namespace agentstream::server::internal

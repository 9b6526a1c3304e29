#include "server/test_client.h"

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <vector>

#include "core/ascii.h"
#include "net/sse_parser.h"

namespace agentstream::server::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

// Runs `io` until `done` or the deadline; false on timeout.
bool RunUntil(asio::io_context& io, const bool& done, milliseconds timeout) {
  io.restart();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done && std::chrono::steady_clock::now() < deadline)
    io.run_one_for(std::chrono::milliseconds(20));
  return done;
}

tcp::endpoint Local(std::uint16_t port) {
  return tcp::endpoint(asio::ip::make_address("127.0.0.1"), port);
}

}  // namespace

TestResponse HttpCall(std::uint16_t port, const std::string& method, const std::string& target,
                      const std::string& body, const std::map<std::string, std::string>& headers,
                      milliseconds timeout) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  TestResponse out;
  beast::error_code ec;
  stream.socket().connect(Local(port), ec);
  if (ec) return out;
  http::request<http::string_body> req(http::string_to_verb(method), target, 11);
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.prepare_payload();
  bool done = false;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::async_write(stream, req, [&](beast::error_code e, std::size_t) {
    if (e) {
      done = true;
      return;
    }
    http::async_read(stream, buffer, parser, [&](beast::error_code e2, std::size_t) {
      if (!e2) {
        auto& res = parser.get();
        out.status = static_cast<int>(res.result_int());
        for (const auto& field : res)
          out.headers[AsciiLowered(field.name_string())] = std::string(field.value());
        out.body = res.body();
      }
      done = true;
    });
  });
  RunUntil(io, done, timeout);
  return out;
}

struct SseClient::Impl {
  asio::io_context io;
  tcp::socket socket{io};
  std::string data;
  net::SseParser parser;
  std::vector<net::SseEvent> events;  // parsed, not yet returned
  bool eof = false;
  bool headers_done = false;
  int status = 0;

  // Reads more bytes; false on timeout.
  bool ReadMore(milliseconds timeout) {
    bool done = false;
    auto buf = std::make_shared<std::array<char, 8192>>();
    socket.async_read_some(asio::buffer(*buf), [&, buf](beast::error_code ec, std::size_t n) {
      if (ec) eof = true;
      data.append(buf->data(), n);
      done = true;
    });
    if (!RunUntil(io, done, timeout)) {
      socket.cancel();
      bool cancelled = false;
      asio::post(io, [&] { cancelled = true; });
      RunUntil(io, cancelled, milliseconds(1000));
      return false;
    }
    return true;
  }
};

SseClient::SseClient() : impl_(std::make_unique<Impl>()) {}
SseClient::~SseClient() = default;

int SseClient::Open(std::uint16_t port, const std::string& target) {
  beast::error_code ec;
  impl_->socket.connect(Local(port), ec);
  if (ec) return 0;
  const std::string req =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
  asio::write(impl_->socket, asio::buffer(req), ec);
  if (ec) return 0;
  while (impl_->data.find("\r\n\r\n") == std::string::npos) {
    if (impl_->eof || !impl_->ReadMore(milliseconds(10000))) return 0;
  }
  const std::size_t end = impl_->data.find("\r\n\r\n");
  const std::string head = impl_->data.substr(0, end);
  impl_->data.erase(0, end + 4);
  impl_->status = std::atoi(head.substr(9, 3).c_str());
  return impl_->status;
}

std::optional<SseEvent> SseClient::Next(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (!impl_->data.empty()) {
      // The bytes after the response head, through the project's parser (comments skipped).
      if (!impl_->parser.Feed(impl_->data, impl_->events).ok()) return std::nullopt;
      impl_->data.clear();
    }
    if (!impl_->events.empty()) {
      SseEvent event{impl_->events.front().event, impl_->events.front().data};
      impl_->events.erase(impl_->events.begin());
      return event;
    }
    const auto now = std::chrono::steady_clock::now();
    if (impl_->eof || now >= deadline) return std::nullopt;
    if (!impl_->ReadMore(std::chrono::duration_cast<milliseconds>(deadline - now)))
      return std::nullopt;
  }
}

bool SseClient::Closed(milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!impl_->eof) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    impl_->ReadMore(std::chrono::duration_cast<milliseconds>(deadline - now));
  }
  return true;
}

struct RawConnection::Impl {
  asio::io_context io;
  tcp::socket socket{io};
  std::string received;
  std::size_t matched = 0;  // the end of the last marker ReadUntil found
  bool eof = false;

  // One read of at most `timeout`; false when nothing arrived in time.
  bool ReadSome(milliseconds timeout) {
    bool done = false;
    auto buf = std::make_shared<std::array<char, 8192>>();
    socket.async_read_some(asio::buffer(*buf), [&, buf](beast::error_code ec, std::size_t n) {
      if (ec && ec != asio::error::operation_aborted) eof = true;  // closed or reset
      received.append(buf->data(), n);
      done = true;
    });
    if (RunUntil(io, done, timeout)) return true;
    socket.cancel();
    RunUntil(io, done, milliseconds(1000));
    return false;
  }
};

RawConnection::RawConnection() : impl_(std::make_unique<Impl>()) {}
RawConnection::~RawConnection() = default;

bool RawConnection::Connect(std::uint16_t port, const std::string& local_address) {
  beast::error_code ec;
  impl_->socket.open(tcp::v4(), ec);
  if (!ec) impl_->socket.bind(tcp::endpoint(asio::ip::make_address(local_address), 0), ec);
  if (!ec) impl_->socket.connect(Local(port), ec);
  return !ec;
}

bool RawConnection::Send(const std::string& bytes) {
  beast::error_code ec;
  asio::write(impl_->socket, asio::buffer(bytes), ec);
  return !ec;
}

std::string RawConnection::ReadUntilClosed(milliseconds timeout) {
  const std::size_t start = impl_->received.size();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!impl_->eof) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    impl_->ReadSome(std::chrono::duration_cast<milliseconds>(deadline - now));
  }
  return impl_->received.substr(start);
}

bool RawConnection::ReadUntil(const std::string& marker, milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const std::size_t at = impl_->received.find(marker, impl_->matched);
    if (at != std::string::npos) {
      impl_->matched = at + marker.size();
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (impl_->eof || now >= deadline) return false;
    impl_->ReadSome(std::chrono::duration_cast<milliseconds>(deadline - now));
  }
}

const std::string& RawConnection::received() const { return impl_->received; }
bool RawConnection::closed() const { return impl_->eof; }

struct WsClient::Impl {
  asio::io_context io;
  websocket::stream<beast::tcp_stream> ws{io};
  beast::flat_buffer buffer;
  std::string close_reason;
  bool closed = false;
};

WsClient::WsClient() : impl_(std::make_unique<Impl>()) {}
WsClient::~WsClient() = default;

int WsClient::Connect(std::uint16_t port, const std::string& target,
                      const std::map<std::string, std::string>& headers) {
  beast::error_code ec;
  beast::get_lowest_layer(impl_->ws).socket().connect(Local(port), ec);
  if (ec) return 0;
  impl_->ws.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
    for (const auto& [k, v] : headers) req.set(k, v);
  }));
  websocket::response_type res;
  impl_->ws.read_message_max(64 << 20);
  impl_->ws.handshake(res, "127.0.0.1:" + std::to_string(port), target, ec);
  return static_cast<int>(res.result_int());
}

bool WsClient::Send(const std::string& text) {
  beast::error_code ec;
  impl_->ws.text(true);
  impl_->ws.write(asio::buffer(text), ec);
  return !ec;
}

std::optional<std::string> WsClient::Read(milliseconds timeout) {
  if (impl_->closed) return std::nullopt;
  bool done = false;
  beast::error_code result;
  impl_->ws.async_read(impl_->buffer, [&](beast::error_code ec, std::size_t) {
    result = ec;
    done = true;
  });
  if (!RunUntil(impl_->io, done, timeout)) {
    impl_->closed = true;  // a cancelled read leaves the stream unusable
    beast::get_lowest_layer(impl_->ws).socket().close();
    RunUntil(impl_->io, done, milliseconds(1000));
    return std::nullopt;
  }
  if (result) {
    impl_->closed = true;
    impl_->close_reason = std::string(impl_->ws.reason().reason.c_str());
    return std::nullopt;
  }
  std::string text = beast::buffers_to_string(impl_->buffer.data());
  impl_->buffer.consume(impl_->buffer.size());
  return text;
}

const std::string& WsClient::close_reason() const { return impl_->close_reason; }
bool WsClient::closed() const { return impl_->closed; }

}  // namespace agentstream::server::testing

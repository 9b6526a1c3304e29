// The one translation unit of the client that includes Asio and Beast (STACK.md: keep Beast in a
// small transport layer). Each call runs its operations on a private io_context, one at a time,
// with the tcp_stream's expiry as the time limit.
#include "cli/client/http_client.h"

#include <fmt/core.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <strings.h>
#include <array>
#include <exception>
#include <limits>

namespace agentstream::cli::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kStreamChunkBytes = 64u << 10;  // one read of a stream body

std::string Seconds(std::chrono::milliseconds ms) {
  return fmt::format("{:.1f} s", static_cast<double>(ms.count()) / 1000.0);
}

}  // namespace

std::string HttpResponse::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), key.size()) == 0)
      return value;
  }
  return "";
}

class HttpClient::Impl {
 public:
  Impl(HttpClientOptions options, Endpoint endpoint)
      : options_(std::move(options)), endpoint_(std::move(endpoint)) {}

  Result<HttpResponse> Request(std::string_view method, std::string_view target,
                               std::string_view body);
  Status Stream(std::string_view target, std::string_view accept, const StreamHandler& handler);

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  // Starts one asynchronous operation with `start(handler)` and runs the io_context until its
  // handler ran; returns the operation's error.
  template <class Start>
  beast::error_code Await(Start&& start) {
    beast::error_code result;
    bool done = false;
    start([&](beast::error_code ec, auto&&...) {
      result = ec;
      done = true;
    });
    ioc_.restart();
    while (!done && ioc_.run_one() > 0) {
    }
    return done ? result : asio::error::operation_aborted;
  }

  Status Connect(beast::tcp_stream& stream);
  Status SendHead(beast::tcp_stream& stream, std::string_view method, std::string_view target,
                  std::string_view body, std::string_view accept);
  Status Broken(const beast::error_code& ec, std::string_view during,
                std::chrono::milliseconds limit) const;

  HttpClientOptions options_;
  Endpoint endpoint_;
  asio::io_context ioc_{1};
};

Status HttpClient::Impl::Connect(beast::tcp_stream& stream) {
  auto unreachable = [&](const std::string& why) {
    return Error(ErrorCode::kUnavailable, "cannot reach the daemon at " + endpoint_.url + ": " +
                                              why + " (is `agentstream serve` running?)");
  };
  tcp::resolver resolver(ioc_);
  beast::error_code ec;
  auto results = resolver.resolve(endpoint_.host, std::to_string(endpoint_.port), ec);
  if (ec) return unreachable(ec.message());
  stream.expires_after(options_.connect_timeout);
  ec = Await([&](auto handler) { stream.async_connect(results, std::move(handler)); });
  if (ec == beast::error::timeout) {
    return unreachable("no connection within " + Seconds(options_.connect_timeout));
  }
  if (ec) return unreachable(ec.message());
  return Status::Ok();
}

Status HttpClient::Impl::SendHead(beast::tcp_stream& stream, std::string_view method,
                                  std::string_view target, std::string_view body,
                                  std::string_view accept) {
  http::request<http::string_body> request;
  request.method_string(method);
  request.target(endpoint_.base_path + std::string(target));
  request.version(11);
  const bool ipv6 = endpoint_.host.find(':') != std::string::npos;
  request.set(http::field::host, (ipv6 ? "[" + endpoint_.host + "]" : endpoint_.host) + ":" +
                                     std::to_string(endpoint_.port));
  request.set(http::field::user_agent, "agentstream-cli");
  request.set(http::field::accept, accept);
  request.set(http::field::connection, "close");
  if (!options_.token.empty()) request.set(http::field::authorization, "Bearer " + options_.token);
  if (!body.empty()) {
    request.set(http::field::content_type, "application/json");
    request.body() = std::string(body);
  }
  request.prepare_payload();
  const beast::error_code ec =
      Await([&](auto handler) { http::async_write(stream, request, std::move(handler)); });
  if (ec) return Broken(ec, "sending the request", options_.request_timeout);
  return Status::Ok();
}

Status HttpClient::Impl::Broken(const beast::error_code& ec, std::string_view during,
                                std::chrono::milliseconds limit) const {
  if (ec == beast::error::timeout) {
    return Error(ErrorCode::kUnavailable, "the daemon at " + endpoint_.url + " did not answer (" +
                                              std::string(during) + ") within " + Seconds(limit));
  }
  if (ec == http::error::body_limit) {
    return Error(ErrorCode::kTooLarge, "the daemon's reply is larger than " +
                                           std::to_string(options_.max_body_bytes) + " bytes");
  }
  return Error(ErrorCode::kUnavailable, "connection to the daemon at " + endpoint_.url +
                                            " failed while " + std::string(during) + ": " +
                                            ec.message());
}

Result<HttpResponse> HttpClient::Impl::Request(std::string_view method, std::string_view target,
                                               std::string_view body) {
  beast::tcp_stream stream(ioc_);
  AS_RETURN_IF_ERROR(Connect(stream));
  stream.expires_after(options_.request_timeout);  // the request and its whole reply
  AS_RETURN_IF_ERROR(SendHead(stream, method, target, body, "application/json"));
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(options_.max_body_bytes);
  const beast::error_code ec =
      Await([&](auto handler) { http::async_read(stream, buffer, parser, std::move(handler)); });
  if (ec) return Broken(ec, "reading the reply", options_.request_timeout);
  HttpResponse response;
  response.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  response.body = std::move(parser.get().body());
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  return response;
}

Status HttpClient::Impl::Stream(std::string_view target, std::string_view accept,
                                const StreamHandler& handler) {
  beast::tcp_stream stream(ioc_);
  AS_RETURN_IF_ERROR(Connect(stream));
  stream.expires_after(options_.request_timeout);
  AS_RETURN_IF_ERROR(SendHead(stream, "GET", target, {}, accept));
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // a live stream has no end
  beast::error_code ec = Await(
      [&](auto handler) { http::async_read_header(stream, buffer, parser, std::move(handler)); });
  if (ec) return Broken(ec, "reading the reply", options_.request_timeout);
  HttpResponse head;
  head.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    head.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  AS_ASSIGN_OR_RETURN(bool more, handler.on_head(head));
  std::array<char, kStreamChunkBytes> chunk;
  while (more && !parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream.expires_after(options_.stream_idle_timeout);
    ec = Await(
        [&](auto handler) { http::async_read_some(stream, buffer, parser, std::move(handler)); });
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return Broken(ec, "reading the stream", options_.stream_idle_timeout);
    const std::size_t got = chunk.size() - parser.get().body().size;
    if (got > 0) {
      AS_ASSIGN_OR_RETURN(more, handler.on_data(std::string_view(chunk.data(), got)));
    }
  }
  return Status::Ok();
}

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

Result<std::unique_ptr<HttpClient>> HttpClient::Create(HttpClientOptions options) {
  AS_ASSIGN_OR_RETURN(Endpoint endpoint, ParseEndpoint(options.url));
  return std::unique_ptr<HttpClient>(
      new HttpClient(std::make_unique<Impl>(std::move(options), std::move(endpoint))));
}

Result<HttpResponse> HttpClient::Request(std::string_view method, std::string_view target,
                                         std::string_view json_body) {
  try {
    return impl_->Request(method, target, json_body);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, std::string("HTTP client: ") + e.what());
  }
}

Status HttpClient::Stream(std::string_view target, std::string_view accept,
                          const StreamHandler& handler) {
  try {
    return impl_->Stream(target, accept, handler);
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, std::string("HTTP client: ") + e.what());
  }
}

const Endpoint& HttpClient::endpoint() const { return impl_->endpoint(); }

}  // namespace agentstream::cli::client

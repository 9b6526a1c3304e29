#include "client/transport.h"

#include <atomic>

namespace agentstream::client {

Transport::Transport(TransportOptions options, Endpoint endpoint)
    : options_(std::move(options)), endpoint_(std::move(endpoint)) {}
Transport::~Transport() = default;

Result<std::unique_ptr<Transport>> Transport::Create(TransportOptions options) {
  AS_ASSIGN_OR_RETURN(Endpoint endpoint, ParseEndpoint(options.url));
  return std::unique_ptr<Transport>(new Transport(std::move(options), std::move(endpoint)));
}

net::HttpRequest Transport::For(std::string_view method, std::string_view target,
                                std::string_view accept) const {
  net::HttpRequest request;
  request.method = std::string(method);
  request.url = endpoint_.UrlOf(target);
  request.headers = {{"User-Agent", "agentstream-cli"}, {"Accept", std::string(accept)}};
  if (!options_.token.empty())
    request.headers.emplace_back("Authorization", "Bearer " + options_.token);
  request.timeout = options_.connect_timeout + options_.request_timeout;
  request.connect_timeout = options_.connect_timeout;
  request.max_reply_bytes = options_.max_body_bytes;
  request.peer = "the daemon at " + endpoint_.url;
  request.unreachable_hint = "(is `agentstream serve` running?)";
  return request;
}

Result<HttpResponse> Transport::Request(std::string_view method, std::string_view target,
                                        std::string_view json_body, std::string_view accept) {
  net::HttpRequest request = For(method, target, accept);
  request.body = std::string(json_body);
  return net::SendHttpRequest(request);
}

Status Transport::Stream(std::string_view target, std::string_view accept,
                         const StreamHandler& handler, const std::atomic<bool>* stop) {
  // The handler's error, if it ended the stream with one.
  Status failed;
  auto keep = [&failed](Result<bool> more) {
    if (!more.ok()) failed = more.status();
    return more.ok() && *more;
  };
  const std::atomic<bool> never{false};
  Result<HttpResponse> ended = net::StreamHttpGet(
      For("GET", target, accept),
      {.on_head = [&](const HttpResponse& head) { return keep(handler.on_head(head)); },
       .on_body = [&](std::string_view bytes) { return keep(handler.on_data(bytes)); }},
      stop != nullptr ? *stop : never, options_.stream_idle_timeout);
  if (!failed.ok()) return failed;
  return ended.status();
}

const Endpoint& Transport::endpoint() const { return endpoint_; }

}  // namespace agentstream::client

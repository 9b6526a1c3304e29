#include "client/endpoint.h"

namespace agentstream::client {

Result<Endpoint> ParseEndpoint(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "bad daemon URL \"" + std::string(url) + "\": " + why);
  };
  Result<net::HttpUrl> server = net::ParseHttpUrl(url);
  if (!server.ok())
    return Error(ErrorCode::kInvalidArgument, "the daemon's URL: " + server.status().message());
  Endpoint endpoint;
  endpoint.url = std::string(url);
  std::string_view path = server->target;
  if (path.find_first_of("?#") != std::string_view::npos)
    return bad("a query or fragment has no place in the daemon's URL");
  while (path.ends_with('/')) path.remove_suffix(1);
  endpoint.base_path = std::string(path);
  endpoint.server = std::move(*server);
  return endpoint;
}

std::string Endpoint::UrlOf(std::string_view target) const {
  return net::UrlOf(server, base_path + std::string(target));
}

}  // namespace agentstream::client

// Internal to src/server: what the HTTP and WebSocket connections share. Includes Beast; only
// http_server.cc, stream_http.cc and ws_connection.cc include it.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "server/address_limiter.h"
#include "server/api_router.h"
#include "server/consumer_routes.h"
#include "server/device_connections.h"
#include "server/device_routes.h"
#include "server/http_server.h"
#include "server/server_stream.h"
#include "server/tls_context.h"
#include "streams/live_source.h"
#include "timeline/timeline_service.h"

namespace agentstream::server::internal {

// Everything a connection needs; owned by Server::Impl, outlives every connection's handlers.
struct ServerContext {
  runtime::AgentManager& agents;
  EventLog& log;
  ServerOptions options;
  Metrics metrics;
  std::unique_ptr<Hub> hub;
  std::unique_ptr<TimelineService> timeline;
  std::unique_ptr<ConsumerRoutes> consumer_routes;
  std::unique_ptr<ApiRouter> router;
  // Runs the /v1 API's requests and the devices' routes (options.request_threads; set by
  // Server::Start). Each connection has at most one request in it, so its queue holds at most
  // max_connections.
  std::unique_ptr<boost::asio::thread_pool> requests;
  // Connections waiting for or reading a request, per client address (set by Server::Start).
  std::unique_ptr<AddressLimiter> waiting;
  std::string base_url;  // of Location headers: options.public_url or the bound address
  // The certificate of new connections; null without TLS (set by Server::Start).
  std::unique_ptr<TlsCertificates> tls;
  // Paired devices: their routes and open connections; null without options.devices.
  std::unique_ptr<DeviceRoutes> device_routes;
  std::unique_ptr<DeviceConnections> device_connections;
};

// Every response over TLS carries this header (HTTP Strict Transport Security: one year).
inline constexpr const char* kHstsHeader = "Strict-Transport-Security";
inline constexpr const char* kHstsValue = "max-age=31536000";

// One outgoing frame: head + *shared + tail, so a batch encoded once is never copied.
using Frame = streams::Frame;

// The frames waiting for a socket (SSE or WebSocket).
using FrameQueue = streams::FrameQueue;

// The client's address of a connection as AddressLimiter counts it ("" when the peer is gone).
std::string RemoteAddress(const boost::asio::ip::tcp::socket& socket);

// What the HTTP connection resolved of a request it hands over (forwarded.h).
struct ResolvedRequest {
  std::string base_url;        // absolute URLs (Location) start with it
  std::string client_address;  // the effective client (HttpRequest::client_address)
  std::string device_id;       // the paired device making it (HttpRequest::device_id)
  std::string peer;            // the TCP peer's address (RemoteAddress), read once per connection
};

// The access log: one debug line `server.request` per request answered (docs/operations.md,
// "Logs"), naming the effective client, and the TCP peer when they differ (a proxy), and the
// paired device making it (never its token).
void LogRequest(std::string_view method, std::string_view route, int status,
                std::string_view client_address, std::string_view peer,
                std::string_view device = {});

// Takes over a connection for one /v1/stream request (stream_http.cc); hands it back through
// ResumeHttp when the connection stays open.
void StartStreamExchange(ServerContext& ctx, ServerStream stream, boost::beast::flat_buffer buffer,
                         boost::beast::http::request<boost::beast::http::string_body> request,
                         ResolvedRequest resolved);
// Takes over a connection for one live read (long-poll or SSE) of `source` (stream_http.cc);
// `route` names the request in the metrics and the access log.
void StartLiveRead(ServerContext& ctx, ServerStream stream, boost::beast::flat_buffer buffer,
                   boost::beast::http::request<boost::beast::http::string_body> request,
                   ResolvedRequest resolved, std::string route,
                   std::unique_ptr<streams::LiveSource> source);
// Continues the keep-alive request loop on a connection (with the bytes already read, and the
// place of its address taken for the next request).
void ResumeHttp(ServerContext& ctx, ServerStream stream, boost::beast::flat_buffer buffer,
                AddressSlot slot, std::string peer);

// Takes over an upgraded connection and runs the WebSocket app protocol on it.
// `device_id`: the paired device that opened it ("" for the owner); its connection is closed
// when the device is revoked.
void StartWebSocket(ServerContext& ctx, ServerStream stream,
                    const boost::beast::http::request<boost::beast::http::string_body>& request,
                    const std::string& device_id = {});

}  // namespace agentstream::server::internal

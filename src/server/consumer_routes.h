// ConsumerRoutes: the durable-consumer endpoints (docs/consumers.md) and the per-session inbox.
//
//   GET    /v1/consumers                      every consumer with its progress and lag
//   POST   /v1/consumers                      create (idempotent for an equal spec)
//   GET    /v1/consumers/{id}                 one consumer
//   DELETE /v1/consumers/{id}                 delete it and its positions
//   POST   /v1/consumers/{id}/resume          unpark ({"session": id} for one session, {} for all)
//   GET    /v1/agents/{id}/inbox              the session's inbox path and token
//   POST   /v1/agents/{id}/inbox              a signed delivery from a child (inbox.h)
//
// Transport-free, like ApiRouter. The consumer service's calls may block briefly on the log; they
// run on the calling (I/O) thread.
#pragma once

#include <string>
#include <vector>

#include "consumers/consumer_service.h"
#include "server/http_types.h"
#include "server/inbox.h"

namespace agentstream::server {

// True for `POST /v1/agents/{id}/inbox`, which carries its own authentication.
bool IsInboxDelivery(const HttpRequest& request);

class ConsumerRoutes {
 public:
  // Either may be null: its endpoints then answer 404. Both outlive the routes.
  ConsumerRoutes(consumers::ConsumerService* consumers, Inbox* inbox);

  // Handles the request when it is one of the routes above (true); else leaves it (false).
  bool Handle(const HttpRequest& request, const std::vector<std::string>& seg,
              const std::function<void(HttpResponse)>& reply);

  // Prometheus lines: delivery counters and lag per consumer (and per session, bounded).
  std::string RenderMetrics();

 private:
  void HandleConsumers(const HttpRequest& request, const std::vector<std::string>& seg,
                       const std::function<void(HttpResponse)>& reply);
  void HandleInbox(const HttpRequest& request, const SessionId& id,
                   const std::function<void(HttpResponse)>& reply);

  consumers::ConsumerService* consumers_;
  Inbox* inbox_;
};

}  // namespace agentstream::server

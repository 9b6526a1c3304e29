// The entry of the protocol layer: routes a request by its method to the reads
// (stream_protocol_read.cc) and writes (stream_protocol_write.cc), and the reserved
// /v1/stream/__ds/ routes to the subscriptions.
#include "streams/stream_protocol.h"

#include "streams/stream_protocol_internal.h"
#include "streams/subscriptions.h"

namespace agentstream::streams {

using protocol_internal::HandleAppend;
using protocol_internal::HandleCreate;
using protocol_internal::HandleDelete;
using protocol_internal::HandleHead;
using protocol_internal::HandleRead;
using protocol_internal::Text;

void HandleStreamRequest(StreamStore& store, SubscriptionManager* subscriptions,
                         const StreamRequest& req, const std::string& base_url,
                         std::function<void(Outcome)> done) {
  if (req.method == "OPTIONS") return done(Text(204, ""));
  if (req.path.rfind("/v1/stream/__ds/", 0) == 0 || req.path == "/v1/stream/__ds") {
    if (subscriptions == nullptr) return done(Text(404, "Subscriptions are not enabled"));
    // Answered once the subscription's journaled state is durable (an ack is not lost).
    StreamResponse response = subscriptions->Handle(req, base_url);
    return store.WhenDurable([done = std::move(done), response = std::move(response)](bool ok) {
      if (ok) return done(response);
      done(Text(500, "Storage failed; the outcome of this request is unknown"));
    });
  }
  if (req.method == "PUT") return HandleCreate(store, req, base_url, done);
  if (req.method == "POST") return HandleAppend(store, req, done);
  if (req.method == "GET") return HandleRead(store, req, done);
  if (req.method == "HEAD") return HandleHead(store, req, done);
  if (req.method == "DELETE") return HandleDelete(store, req, done);
  done(Text(405, "Method not allowed"));
}

}  // namespace agentstream::streams

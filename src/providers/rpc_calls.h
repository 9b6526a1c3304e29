// RpcCalls: the JSON-RPC requests a provider has sent to its runtime (an ACP agent, codex
// app-server) and that wait on a response, by id. Ids count up from 1 and are never reused. Each
// reply runs at most once: with the response (its result, or kInternal "code: message" for an
// error response), or with the status of Fail() / FailAll(). The provider writes the request
// lines itself (the wire formats differ).
//
// Not thread-safe: used on the provider's loop thread. A reply may send new requests.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/status.h"
#include "core/turn/provider_event.h"
#include "jsonrpc/json_rpc.h"

namespace agentstream::providers {

class RpcCalls {
 public:
  using Reply = std::function<void(Result<boost::json::value>)>;

  // The id of the next request (taken even when that request then cannot be sent).
  std::int64_t TakeId() { return next_id_++; }
  // Keeps `reply` until the response to `id` comes.
  void Add(std::int64_t id, Reply reply) { pending_[id] = std::move(reply); }
  std::size_t size() const { return pending_.size(); }
  // A kResponse message: runs the reply of its id. A response to no request of ours is dropped.
  void Resolve(jsonrpc::RpcMessage response);
  // Runs the reply of `id` with `status`, if it still waits.
  void Fail(std::int64_t id, Status status);
  // Runs every waiting reply with `status` (the runtime is gone).
  void FailAll(const Status& status);

 private:
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, Reply> pending_;
};

// The non-fatal protocol_garbage error for a stdout line that is not a JSON-RPC message (`why`:
// ParseRpc's status); it quotes the line's first 200 bytes.
turn::ProviderError ProtocolGarbage(const Status& why, const std::string& line);

}  // namespace agentstream::providers

#include "providers/rpc_calls.h"

#include <utility>

namespace agentstream::providers {

void RpcCalls::Resolve(jsonrpc::RpcMessage response) {
  const std::optional<std::int64_t> id = response.id.int64();
  if (!id) return;
  auto node = pending_.extract(*id);
  if (node.empty()) return;
  if (response.error) return node.mapped()(Error(ErrorCode::kInternal, *response.error));
  node.mapped()(std::move(response.result));
}

void RpcCalls::Fail(std::int64_t id, Status status) {
  auto node = pending_.extract(id);
  if (!node.empty()) node.mapped()(std::move(status));
}

void RpcCalls::FailAll(const Status& status) {
  auto pending = std::exchange(pending_, {});
  for (auto& [id, reply] : pending) reply(status);
}

turn::ProviderError ProtocolGarbage(const Status& why, const std::string& line) {
  return turn::ProviderError{"protocol_garbage", why.message() + ": " + line.substr(0, 200), false};
}

}  // namespace agentstream::providers

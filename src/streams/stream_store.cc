#include "streams/stream_store.h"

#include <future>
#include <memory>
#include <utility>

namespace agentstream::streams {

namespace {

template <class Start>
OpResult Wait(Start start) {
  auto promise = std::make_shared<std::promise<OpResult>>();
  std::future<OpResult> result = promise->get_future();
  start([promise](OpResult r) { promise->set_value(std::move(r)); });
  return result.get();
}

}  // namespace

OpResult StreamStore::Create(const CreateArgs& args) {
  return Wait([&](Done done) { CreateAsync(args, std::move(done)); });
}

OpResult StreamStore::Append(const AppendArgs& args) {
  return Wait([&](Done done) { AppendAsync(args, std::move(done)); });
}

OpResult StreamStore::Delete(const std::string& path) {
  return Wait([&](Done done) { DeleteAsync(path, std::move(done)); });
}

}  // namespace agentstream::streams

#include "streams/streams_factory.h"

#include <filesystem>

#include "streams/memory_stream_store.h"
#include "streams/postgres_streams.h"

namespace agentstream::streams {

Streams::Streams(std::unique_ptr<StreamStore> store,
                 std::unique_ptr<SubscriptionManager> subscriptions)
    : store_(std::move(store)), subscriptions_(std::move(subscriptions)) {
  store_->SetChangeHook(
      [s = subscriptions_.get()](const std::string& path) { s->OnStreamChanged(path); });
}

Streams::~Streams() {
  store_->SetChangeHook({});  // before the manager goes
  subscriptions_.reset();
  store_.reset();
}

Result<std::unique_ptr<Streams>> OpenStreams(const StreamsConfig& config) {
  const std::string& url = config.store_url;
  std::unique_ptr<StreamStore> store;
  std::unique_ptr<SubscriptionRecords> records;
  if (IsPostgresStreams(url)) {
    PostgresStreamsOptions options;
    options.conninfo = url;
    options.limits = config.limits;
    AS_ASSIGN_OR_RETURN(store, OpenPostgresStreamStore(options));
    AS_ASSIGN_OR_RETURN(records, OpenPostgresSubscriptionRecords(options));
  } else {
    std::unique_ptr<MemoryStreamStore> memory;
    std::string key_path;
    if (config.streams_db.empty()) {
      memory = std::make_unique<MemoryStreamStore>(config.limits, nullptr);
    } else {
      AS_ASSIGN_OR_RETURN(memory, MemoryStreamStore::Open(config.streams_db, config.limits));
      key_path = SubscriptionKeyPath(config.streams_db);
    }
    records = MakeMemorySubscriptionRecords(*memory, std::move(key_path));
    store = std::move(memory);
  }
  auto subscriptions =
      std::make_unique<SubscriptionManager>(*store, std::move(records), config.subscription_limits);
  AS_RETURN_IF_ERROR(subscriptions->Restore());
  return std::make_unique<Streams>(std::move(store), std::move(subscriptions));
}

bool IsPostgresStreams(const std::string& store_url) {
  return store_url.rfind("postgres://", 0) == 0 || store_url.rfind("postgresql://", 0) == 0;
}

StreamsConfig StreamsConfigFor(const std::string& store_url, const std::string& data_dir) {
  StreamsConfig config;
  config.store_url = store_url;
  if (!IsPostgresStreams(store_url) && store_url.rfind("memory:", 0) != 0)
    config.streams_db = (std::filesystem::path(data_dir) / "streams.db").string();
  return config;
}

std::string SubscriptionKeyPath(const std::string& streams_db) {
  return (std::filesystem::path(streams_db).parent_path() / "subscriptions.key").string();
}

}  // namespace agentstream::streams

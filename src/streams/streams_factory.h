// The one place that picks where the generic Durable Streams and their subscriptions live
// (stream_store.h, subscriptions.h), from the daemon's store URL and data directory:
//   postgresql://... or postgres://...  the PostgreSQL store and subscription records, shared
//                                       by every daemon on that database (postgres_streams.h)
//   anything else, with a streams_db    in memory, journaled to the SQLite file streams_db; the
//                                       subscription keys in subscriptions.key beside it
//   anything else, streams_db ""        in memory only, keys per run
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "streams/stream_store.h"
#include "streams/subscriptions.h"

namespace agentstream::streams {

struct StreamsConfig {
  std::string store_url;   // as the session log's (`--store`)
  std::string streams_db;  // the SQLite journal when not on PostgreSQL; "" for memory only
  StreamLimits limits;
  SubscriptionLimits subscription_limits;
};

// The store with its subscription manager, the manager hooked to the store's changes.
// Destroying it unhooks the manager, then stops the manager, then the store.
class Streams {
 public:
  Streams(std::unique_ptr<StreamStore> store, std::unique_ptr<SubscriptionManager> subscriptions);
  ~Streams();
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;

  StreamStore& store() { return *store_; }
  SubscriptionManager& subscriptions() { return *subscriptions_; }

 private:
  std::unique_ptr<StreamStore> store_;
  std::unique_ptr<SubscriptionManager> subscriptions_;
};

// Opens the configured store and restores its subscriptions. The errors of the store's own open.
Result<std::unique_ptr<Streams>> OpenStreams(const StreamsConfig& config);

// True for a store URL the streams keep on PostgreSQL ("postgresql://...", "postgres://...").
bool IsPostgresStreams(const std::string& store_url);

// Where the streams of a daemon on `store_url` with the data directory `data_dir` live: on
// PostgreSQL the store's database; else the journal `data_dir`/streams.db, or "" (memory only)
// for a "memory:" store. `agentstream serve` and `store copy` both ask here.
StreamsConfig StreamsConfigFor(const std::string& store_url, const std::string& data_dir);

// The subscription key file kept beside the SQLite journal `streams_db`.
std::string SubscriptionKeyPath(const std::string& streams_db);

}  // namespace agentstream::streams

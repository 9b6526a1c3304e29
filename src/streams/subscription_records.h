// Where the subscriptions of the Durable Streams subscription API live (subscriptions.h): the
// state of each subscription as a value, and SubscriptionRecords, the store that holds them and
// the signing and token keys. Two implementations, chosen by OpenStreams (streams_factory.h):
// the memory records journaled in the SQLite streams database with a key file beside it
// (subscription_state.cc), and PostgreSQL rows shared by every daemon on the database
// (postgres_subscriptions.cc), where a change of one subscription is a transaction under its
// lock, timed by the database's clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace agentstream::streams {

class MemoryStreamStore;

// The signing key's seed (Ed25519) and the token key, in that order, as SubscriptionRecords
// keeps them.
inline constexpr std::size_t kSubscriptionSeedBytes = 32;
inline constexpr std::size_t kSubscriptionTokenKeyBytes = 32;
// The memory records' journal key of a subscription is this prefix and its id.
inline constexpr std::string_view kSubscriptionRecordPrefix = "subscription/";
// The name of the keys' row in the PostgreSQL records' ds_keys.
inline constexpr std::string_view kSubscriptionKeysName = "subscriptions";

struct SubscriptionLink {
  std::set<std::string> types;  // "explicit", "glob"
  std::string acked;            // offset, or "-1"
};

// One Durable Streams subscription as stored: its configuration, followed streams and the wake in
// progress.
struct SubscriptionRecord {
  std::string id, type, pattern, webhook_url, wake_stream, description, base_url, created_at;
  std::vector<std::string> explicit_streams;
  std::int64_t lease_ttl_ms = 30000;
  std::string status = "active";
  std::map<std::string, SubscriptionLink> streams;  // relative paths
  std::int64_t generation = 0;
  std::string wake_id, token, holder;
  std::int64_t lease_expires_ms = 0;  // by the records' clock
  std::map<std::string, std::string> snapshot;
};

// The stored form (JSON text) of a subscription, and back (nullopt when unreadable).
std::string EncodeSubscription(const SubscriptionRecord& s);
std::optional<SubscriptionRecord> DecodeSubscription(const std::string& text);

class SubscriptionRecords {
 public:
  // What one change of one subscription sees.
  struct Slot {
    std::optional<SubscriptionRecord>
        sub;                             // as stored (nullopt: none); what is left here is stored
    std::int64_t now_ms = 0;             // the records' clock (for leases and tokens)
    std::function<std::size_t()> count;  // how many subscriptions are stored
  };

  virtual ~SubscriptionRecords() = default;

  // The keys (kSubscriptionSeedBytes + kSubscriptionTokenKeyBytes bytes), created when missing;
  // "" when these records keep none (the keys are then this run's). Call once, before use.
  virtual Result<std::string> OpenKeys() = 0;
  // Runs `fn` on subscription `id` with every other change of it excluded (by this daemon or,
  // for shared records, any other) and stores what `fn` leaves in the slot. An error (the
  // storage failed) means nothing `fn` did was stored: its effects must be dropped. `fn` must not
  // call back into these records.
  virtual Status Update(const std::string& id, const std::function<void(Slot&)>& fn) = 0;
  // The subscriptions that may follow `relative_path`: those following it already (`linked`) and
  // those with a pattern (the caller matches the pattern).
  struct Candidate {
    std::string id;
    std::string pattern;
    bool linked = false;
  };
  virtual Result<std::vector<Candidate>> Candidates(const std::string& relative_path) = 0;
  // True when a subscription may exist. Lock-free (it is asked on every stream change); for
  // shared records it may lag another daemon's first subscription by a Refresh interval.
  virtual bool Any() const = 0;
  // Called about once a second by the delivery thread.
  virtual void Refresh() {}
};

// The memory records: subscriptions held in memory and journaled as named records of `store`
// (MemoryStreamStore::PutState), the keys in the file `key_path` (mode 0600, created at first
// open; "" keeps this run's fresh keys). `store` outlives the records.
std::unique_ptr<SubscriptionRecords> MakeMemorySubscriptionRecords(MemoryStreamStore& store,
                                                                   std::string key_path);

// The memory records' key file at `path`: its keys, or "" when there is no file; kCorruption
// when it does not hold kSubscriptionSeedBytes + kSubscriptionTokenKeyBytes bytes.
Result<std::string> ReadSubscriptionKeyFile(const std::string& path);
// Writes `keys` to the key file at `path`: mode 0600, written whole and fsynced, then renamed
// into place. kIoError when it cannot.
Status WriteSubscriptionKeyFile(const std::string& path, const std::string& keys);

}  // namespace agentstream::streams

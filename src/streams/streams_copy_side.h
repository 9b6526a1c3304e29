// Internal to the streams copy (streams_copy.h): one side of a copy, the SQLite journal of a data
// directory (streams_copy_journal.cc) or the `ds_*` tables of a PostgreSQL database
// (streams_copy_postgres.cc), behind the few calls the copier needs. Each side reads and writes
// its store's own rows (the journal through StreamJournal, PostgreSQL through its tables), so a
// stream keeps its configuration, its producers' states, and every message its offset and bytes.
//
// Not thread-safe: one owner thread. No daemon may use the store meanwhile (the copy holds it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "streams/offset.h"
#include "streams/stream_model.h"

namespace agentstream::streams::copy {

// One stream as a side stores it.
struct StoredStream {
  StreamMeta meta;            // `id` is the side's own; producer states included
  Offset tail;                // the last own message's offset, else the fork offset (or zero)
  std::int64_t messages = 0;  // own messages (a fork's source's are its source's)
  // When it was last read or written (sliding TTL); the journal keeps none (a daemon restarts
  // each TTL when it loads the journal).
  std::optional<std::int64_t> last_access_ms;
};

class Side {
 public:
  virtual ~Side() = default;
  // Where the streams are, for messages (a PostgreSQL URL without its password).
  virtual const std::string& name() const = 0;
  // False when the side keeps no access times (the journal).
  virtual bool keeps_access_times() const = 0;
  // The side's clock in Unix milliseconds (the database's on PostgreSQL).
  virtual Result<std::int64_t> NowMs() = 0;

  // Every stored stream, soft-deleted ones included, by id.
  virtual Result<std::vector<StoredStream>> Streams() = 0;
  // The own messages of stream `id` after `after` (from the first when nullopt), in offset
  // order: at most `max_messages`, and no more once `max_bytes` are reached (at least one).
  virtual Result<std::vector<Message>> Messages(std::int64_t id, std::optional<Offset> after,
                                                std::size_t max_messages,
                                                std::size_t max_bytes) = 0;

  // Inserts the stream `s` (`s.meta.id` 0) or replaces the configuration and producer states of
  // the stored stream `s.meta.id`, and returns its id. `source_id`: this side's id of the stream
  // it forks. A new row's tail is `s.tail` and its access time `s.last_access_ms` (else now); a
  // replaced row keeps its access time. Durable once Sync returns.
  virtual Result<std::int64_t> PutStream(const StoredStream& s,
                                         std::optional<std::int64_t> source_id) = 0;
  // Appends `messages` (offsets after the stream's tail, ascending) to stream `id` in one
  // transaction; the stream's tail follows. Durable when it returns.
  virtual Status AddMessages(std::int64_t id, const std::vector<Message>& messages) = 0;

  // The subscriptions: id -> the stored record (EncodeSubscription's text).
  virtual Result<std::map<std::string, std::string>> Subscriptions() = 0;
  virtual Status PutSubscription(const std::string& id, const std::string& record) = 0;
  // The subscription keys (subscription_records.h), "" when the side keeps none yet.
  virtual Result<std::string> Keys() = 0;
  virtual Status PutKeys(const std::string& keys) = 0;

  // Makes every write durable, then reads the side again from its storage (the journal reopens
  // its file), so that what follows reads what is stored.
  virtual Status Sync() = 0;
};

// The journal `streams_db` with the key file beside it (streams_factory.h). `create`: a missing
// journal is created (the destination); else a missing one is a side without streams. kIoError
// when the journal cannot be opened (a daemon holds it) or read.
Result<std::unique_ptr<Side>> OpenJournalSide(const std::string& streams_db, bool create);

// The streams of the PostgreSQL database `conninfo`, called `name` in messages. `create`: the
// tables are created or checked (the destination); else missing tables are a side without streams.
// kUnavailable when the server cannot be reached; kUnsupportedVersion for tables newer than this
// build's.
Result<std::unique_ptr<Side>> OpenPostgresSide(const std::string& conninfo, std::string name,
                                               bool create);

}  // namespace agentstream::streams::copy

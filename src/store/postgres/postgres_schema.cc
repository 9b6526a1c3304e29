#include "store/postgres/postgres_schema.h"

#include <iterator>
#include <string>

#include "store/item_index.h"
#include "store/postgres/postgres_log.h"
#include "store/search_index.h"

namespace agentstream {

namespace {

// Version 1: the SQLite layout (sqlite_schema.cc) with PostgreSQL types.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS agentstream_schema(version integer NOT NULL);
CREATE TABLE IF NOT EXISTS sessions(
  key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id text NOT NULL UNIQUE,
  provider text NOT NULL,
  cwd text NOT NULL,
  title text NOT NULL,
  created_ms bigint NOT NULL,
  persistence text NOT NULL,
  status text NOT NULL,
  forked_session text,
  forked_epoch bigint,
  forked_seq bigint,
  current_epoch bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS epochs(
  session bigint NOT NULL,
  epoch bigint NOT NULL,
  base_session text,
  base_epoch bigint,
  base_seq bigint,
  PRIMARY KEY(session, epoch)
);
CREATE TABLE IF NOT EXISTS events(
  session bigint NOT NULL,
  epoch bigint NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  format bigint NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY(session, epoch, first_seq)
);
CREATE TABLE IF NOT EXISTS producers(
  session bigint NOT NULL,
  producer text NOT NULL,
  epoch bigint NOT NULL,
  seq bigint NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  PRIMARY KEY(session, producer)
);
CREATE TABLE IF NOT EXISTS consumer_positions(
  consumer text NOT NULL,
  session text NOT NULL,
  epoch bigint NOT NULL,
  seq bigint NOT NULL,
  lease_owner text NOT NULL,
  generation bigint NOT NULL,
  lease_expires_ms bigint NOT NULL,
  adapter_state text NOT NULL,
  PRIMARY KEY(consumer, session)
);
CREATE TABLE IF NOT EXISTS consumers(
  id text PRIMARY KEY,
  definition text NOT NULL
);
)sql";

// Version 2 adds agent ownership (store/coordination.h): each session's lease on its row, the
// generation that wrote each record batch (`writer`, 0 before version 2 or from outside a
// runtime), the history of grants, the daemon registry and the daemons' shared secrets. Every
// statement is idempotent, so a version-1 database is migrated in place.
constexpr const char* kSchemaV2 = R"sql(
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner text NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner_generation bigint NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS owner_expires_ms bigint NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS sessions_by_owner_expiry ON sessions(owner_expires_ms)
  WHERE owner <> '';
ALTER TABLE events ADD COLUMN IF NOT EXISTS writer bigint NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS owner_history(
  session text NOT NULL,
  generation bigint NOT NULL,
  owner text NOT NULL,
  granted_ms bigint NOT NULL,
  epoch bigint NOT NULL,
  seq bigint NOT NULL,
  PRIMARY KEY(session, generation)
);
CREATE TABLE IF NOT EXISTS daemons(
  id text PRIMARY KEY,
  url text NOT NULL,
  host text NOT NULL,
  data_dir text NOT NULL,
  started_ms bigint NOT NULL,
  heartbeat_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS secrets(
  name text PRIMARY KEY,
  value text NOT NULL
);
)sql";

// Version 3 adds session checkpoints (EventLog::SaveCheckpoint), one row per session.
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE IF NOT EXISTS checkpoints(
  session text PRIMARY KEY,
  epoch bigint NOT NULL,
  seq bigint NOT NULL,
  body text NOT NULL
);
)sql";

// Version 4 adds the timeline's durable item index (item_index.h).
std::string SchemaV4() {
  return std::string(R"sql(
CREATE TABLE IF NOT EXISTS timeline_index(
  session text NOT NULL,
  epoch bigint NOT NULL,
  format bigint NOT NULL,
  watermark bigint NOT NULL,
  items bigint NOT NULL,
  base_items bigint NOT NULL,
  PRIMARY KEY(session, epoch)
);
CREATE TABLE IF NOT EXISTS timeline_items(
  session text NOT NULL,
  epoch bigint NOT NULL,
  ordinal bigint NOT NULL,
  kind bigint NOT NULL,
  key text NOT NULL,
  merges bigint NOT NULL,
  seq_start bigint NOT NULL,
  seq_end bigint NOT NULL,
  ranges text NOT NULL,
  PRIMARY KEY(session, epoch, ordinal)
);
CREATE UNIQUE INDEX IF NOT EXISTS timeline_items_by_key ON timeline_items(session, epoch, key)
  WHERE merges = 1;
CREATE INDEX IF NOT EXISTS timeline_items_by_start ON timeline_items(session, epoch, seq_start);
CREATE INDEX IF NOT EXISTS timeline_items_long ON timeline_items(session, epoch, seq_end) WHERE )sql") +
         kLongItemCondition + ";\n";
}

// Version 5 adds the full-text search index (search_index.h): documents with a stored tsvector
// of the 'simple' configuration (no stemming, any language) under a GIN index, and one state row
// per session. `at` is the commit time of the event a document begins at: hits are newest
// first by it.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE IF NOT EXISTS search_documents(
  id bigserial PRIMARY KEY,
  session text NOT NULL,
  epoch bigint NOT NULL,
  seq bigint NOT NULL,
  at bigint NOT NULL,
  kind text NOT NULL,
  body text NOT NULL,
  words tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED
);
CREATE INDEX IF NOT EXISTS search_documents_words ON search_documents USING gin(words);
CREATE INDEX IF NOT EXISTS search_documents_by_time ON search_documents(at, id);
CREATE INDEX IF NOT EXISTS search_documents_by_session ON search_documents(session, at, id);
CREATE TABLE IF NOT EXISTS search_state(
  session text PRIMARY KEY,
  epoch bigint NOT NULL,
  seq bigint NOT NULL
);
)sql";

// Version 6 adds each session's usage totals (event_log.h, SessionMeta::usage), summed as events
// append; a session stored before it has none (NULL).
constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE sessions ADD COLUMN IF NOT EXISTS usage text;
)sql";

// Version 7 hash-partitions the search documents kSearchPartitions ways by id (search_slices.h),
// each partition with its own GIN and time indexes, so that one search reads them on several
// connections at once: a GIN index cannot bound its posting lists to a range, so the work is
// split by splitting the data. The documents are dropped and every session is indexed again at
// the next start (the background indexer rebuilds from the log).
constexpr const char* kSchemaV7 = R"sql(
DROP TABLE IF EXISTS search_documents;
CREATE TABLE search_documents(
  id bigserial PRIMARY KEY,
  session text NOT NULL,
  epoch bigint NOT NULL,
  seq bigint NOT NULL,
  at bigint NOT NULL,
  kind text NOT NULL,
  body text NOT NULL,
  words tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED
) PARTITION BY HASH (id);
CREATE TABLE search_documents_0 PARTITION OF search_documents
  FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE search_documents_1 PARTITION OF search_documents
  FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE search_documents_2 PARTITION OF search_documents
  FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE search_documents_3 PARTITION OF search_documents
  FOR VALUES WITH (MODULUS 4, REMAINDER 3);
CREATE INDEX search_documents_words ON search_documents USING gin(words);
CREATE INDEX search_documents_by_time ON search_documents(at, id);
CREATE INDEX search_documents_by_session ON search_documents(session, at, id);
DELETE FROM search_state;
)sql";
static_assert(kSearchPartitions == 4, "another number of partitions needs a schema version");

// Version 8 adds paired devices (device_store.h; SQLite's version 10): one-time pairing codes,
// devices and the presence their clients report, codes and tokens as their SHA-256.
constexpr const char* kSchemaV8 = R"sql(
CREATE TABLE IF NOT EXISTS pairings(
  code_hash bytea PRIMARY KEY,
  name text NOT NULL,
  created_ms bigint NOT NULL,
  expires_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS devices(
  id text PRIMARY KEY,
  name text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  created_ms bigint NOT NULL,
  last_seen_ms bigint NOT NULL,
  user_agent text NOT NULL,
  revoked_ms bigint NOT NULL,
  settings text NOT NULL
);
CREATE INDEX IF NOT EXISTS devices_by_revoked ON devices(revoked_ms) WHERE revoked_ms <> 0;
CREATE TABLE IF NOT EXISTS presence(
  client text PRIMARY KEY,
  device_id text NOT NULL,
  visible boolean NOT NULL,
  focused_agent text NOT NULL,
  last_activity_ms bigint NOT NULL,
  expires_ms bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS presence_by_expiry ON presence(expires_ms);
)sql";

// Version 9 adds the writers' commit stamps (pg/commit_outcome.h): each log's writer
// stamps its row in every batch, so a batch whose COMMIT answer was lost is looked up, not guessed.
constexpr const char* kSchemaV9 = R"sql(
CREATE TABLE IF NOT EXISTS commit_stamps(
  writer text PRIMARY KEY,
  batch bigint NOT NULL,
  stamped_ms bigint NOT NULL
);
)sql";

// Version 10 adds schedules (schedule_store.h; SQLite's version 11): each schedule's definition,
// progress and lease, and its newest firings, keyed by their tick.
constexpr const char* kSchemaV10 = R"sql(
CREATE TABLE IF NOT EXISTS schedules(
  id text PRIMARY KEY,
  definition text NOT NULL,
  paused boolean NOT NULL,
  created_ms bigint NOT NULL,
  updated_ms bigint NOT NULL,
  last_tick_ms bigint NOT NULL,
  pending_tick_ms bigint NOT NULL,
  lease_owner text NOT NULL,
  lease_expires_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS schedule_firings(
  schedule_id text NOT NULL,
  tick_ms bigint NOT NULL,
  first_tick_ms bigint NOT NULL,
  ticks bigint NOT NULL,
  recorded_ms bigint NOT NULL,
  outcome text NOT NULL,
  agent text NOT NULL,
  client_message_id text NOT NULL,
  turn_id text NOT NULL,
  detail text NOT NULL,
  PRIMARY KEY(schedule_id, tick_ms)
);
)sql";

}  // namespace

const pg::SchemaLayout& PostgresLogSchema() {
  static const std::string kSchemaV4 = SchemaV4();
  const char* const scripts[] = {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4.c_str(), kSchemaV5,
                                 kSchemaV6, kSchemaV7, kSchemaV8, kSchemaV9,         kSchemaV10};
  static_assert(std::size(scripts) == kPostgresSchemaVersion, "a script for each version");
  static const pg::SchemaLayout kLayout{
      0x61677374726d31,  // "agstrm1": serializes daemons starting together
      "agentstream_schema",
      {std::begin(scripts), std::end(scripts)},
      "the database has",
  };
  return kLayout;
}

}  // namespace agentstream

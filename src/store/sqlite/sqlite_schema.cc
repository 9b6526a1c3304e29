#include "store/sqlite/sqlite_schema.h"

#include <string>

#include "store/item_index.h"
#include "store/search_index.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream::sqlite {

namespace {

// Version 1. Seqs and epochs are stored as INTEGER (int64). Events are stored as record batches
// (store/record_batch.h): one row holds consecutive events of one (session, epoch), appended in
// commit order, found through the index on (session, epoch, first_seq).
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE sessions(
  key INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  provider TEXT NOT NULL,
  cwd TEXT NOT NULL,
  title TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  persistence TEXT NOT NULL,
  status TEXT NOT NULL,
  forked_session TEXT,
  forked_epoch INTEGER,
  forked_seq INTEGER,
  current_epoch INTEGER NOT NULL
) STRICT;
CREATE TABLE epochs(
  session INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  base_session TEXT,
  base_epoch INTEGER,
  base_seq INTEGER,
  PRIMARY KEY(session, epoch)
) STRICT, WITHOUT ROWID;
CREATE TABLE events(
  session INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  format INTEGER NOT NULL,
  data BLOB NOT NULL
) STRICT;
CREATE UNIQUE INDEX events_by_seq ON events(session, epoch, first_seq);
CREATE TABLE producers(
  session INTEGER NOT NULL,
  producer TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  PRIMARY KEY(session, producer)
) STRICT, WITHOUT ROWID;
CREATE TABLE consumer_positions(
  consumer TEXT NOT NULL,
  session TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  lease_owner TEXT NOT NULL,
  generation INTEGER NOT NULL,
  lease_expires_ms INTEGER NOT NULL,
  adapter_state TEXT NOT NULL,
  PRIMARY KEY(consumer, session)
) STRICT, WITHOUT ROWID;
)sql";

// Version 2 adds the consumer definitions (ConsumerStore::SaveConsumer). Migrating from version 1
// only creates the table: no existing row changes.
constexpr const char* kSchemaV2Additions = R"sql(
CREATE TABLE consumers(
  id TEXT PRIMARY KEY,
  definition TEXT NOT NULL
) STRICT, WITHOUT ROWID;
)sql";

// Version 3 adds agent ownership (store/coordination.h): the lease of each session on its row,
// the generation that wrote each record batch (`writer`, 0 for batches written before version 3
// or from outside a runtime), the history of grants and the daemon registry. Existing rows keep
// their meaning: no session is owned and every old batch has writer 0.
constexpr const char* kSchemaV3Additions = R"sql(
ALTER TABLE sessions ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN owner_generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN owner_expires_ms INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_owner_expiry ON sessions(owner_expires_ms) WHERE owner <> '';
ALTER TABLE events ADD COLUMN writer INTEGER NOT NULL DEFAULT 0;
CREATE TABLE owner_history(
  session TEXT NOT NULL,
  generation INTEGER NOT NULL,
  owner TEXT NOT NULL,
  granted_ms INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY(session, generation)
) STRICT, WITHOUT ROWID;
CREATE TABLE daemons(
  id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  host TEXT NOT NULL,
  data_dir TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  heartbeat_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
)sql";

// Version 4 adds session checkpoints (EventLog::SaveCheckpoint), one row per session. Migrating
// from version 3 only creates the table: sessions without a row load from their history.
constexpr const char* kSchemaV4Additions = R"sql(
CREATE TABLE checkpoints(
  session TEXT PRIMARY KEY,
  epoch INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL
) STRICT, WITHOUT ROWID;
)sql";

// Version 5 adds the timeline's durable item index (item_index.h). Migrating from version 4 only
// creates the tables: sessions without rows are indexed from their history when first paged.
std::string SchemaV5Additions() {
  return std::string(R"sql(
CREATE TABLE timeline_index(
  session TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  format INTEGER NOT NULL,
  watermark INTEGER NOT NULL,
  items INTEGER NOT NULL,
  base_items INTEGER NOT NULL,
  PRIMARY KEY(session, epoch)
) STRICT, WITHOUT ROWID;
CREATE TABLE timeline_items(
  session TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  ordinal INTEGER NOT NULL,
  kind INTEGER NOT NULL,
  key TEXT NOT NULL,
  merges INTEGER NOT NULL,
  seq_start INTEGER NOT NULL,
  seq_end INTEGER NOT NULL,
  ranges TEXT NOT NULL,
  PRIMARY KEY(session, epoch, ordinal)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX timeline_items_by_key ON timeline_items(session, epoch, key) WHERE merges = 1;
CREATE INDEX timeline_items_by_start ON timeline_items(session, epoch, seq_start);
CREATE INDEX timeline_items_long ON timeline_items(session, epoch, seq_end) WHERE )sql") +
         kLongItemCondition + ";\n";
}

// Version 6 adds the full-text search index (search_index.h): an FTS5 table whose session column
// is indexed too (a session's hits are found through it), and one state row per session.
// Migrating from version 5 only creates the tables: sessions are indexed at the next start.
constexpr const char* kSchemaV6Additions = R"sql(
CREATE VIRTUAL TABLE search_documents USING fts5(
  body, session, epoch UNINDEXED, seq UNINDEXED, kind UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE search_state(
  session TEXT PRIMARY KEY,
  epoch INTEGER NOT NULL,
  seq INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
)sql";

// Version 7 keeps no token positions in the search index (detail=column): its posting lists
// shrink, and intersecting two common words' lists takes about two thirds of the time. Queries
// no longer need phrases (sqlite_search_index.cc). The table is made anew and every session is
// indexed again at the next start.
constexpr const char* kSchemaV7Changes = R"sql(
DROP TABLE search_documents;
CREATE VIRTUAL TABLE search_documents USING fts5(
  body, session, epoch UNINDEXED, seq UNINDEXED, kind UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2', detail = column
);
DELETE FROM search_state;
)sql";

// Version 8 adds each session's usage totals (event_log.h, SessionMeta::usage), summed as events
// append. A session stored before it has none (NULL): its events are not counted again.
constexpr const char* kSchemaV8Additions = R"sql(
ALTER TABLE sessions ADD COLUMN usage TEXT;
)sql";

// Version 9 splits the search index into kSearchPartitions FTS5 tables (search_slices.h), each
// document in the one its millisecond hashes to (sqlite_search_index.cc), so that one search
// reads them on several connections at once: FTS5 cannot bound an AND of two words to a rowid
// range (SQLite 3.40 merges the words' whole posting lists before it looks at the range), so
// the work is split by splitting the data. The documents are dropped and every session is
// indexed again at the next start.
std::string SchemaV9Changes() {
  static_assert(kSearchPartitions == 4, "another number of parts needs a schema version");
  std::string sql = "DROP TABLE search_documents;\n";
  for (int part = 0; part < 4; ++part) {
    sql += "CREATE VIRTUAL TABLE search_documents_" + std::to_string(part) +
           " USING fts5(body, session, epoch UNINDEXED, seq UNINDEXED, kind UNINDEXED, "
           "tokenize = 'unicode61 remove_diacritics 2', detail = column);\n";
  }
  return sql + "DELETE FROM search_state;\n";
}

// Version 10 adds paired devices (device_store.h): one-time pairing codes, devices and the
// presence their clients report. Codes and tokens are stored as their SHA-256 (32-byte blobs).
// Migrating from version 9 only creates the tables: no device is paired.
constexpr const char* kSchemaV10Additions = R"sql(
CREATE TABLE pairings(
  code_hash BLOB PRIMARY KEY,
  name TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE devices(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  token_hash BLOB NOT NULL UNIQUE,
  created_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  user_agent TEXT NOT NULL,
  revoked_ms INTEGER NOT NULL,
  settings TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX devices_by_revoked ON devices(revoked_ms) WHERE revoked_ms <> 0;
CREATE TABLE presence(
  client TEXT PRIMARY KEY,
  device_id TEXT NOT NULL,
  visible INTEGER NOT NULL,
  focused_agent TEXT NOT NULL,
  last_activity_ms INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX presence_by_expiry ON presence(expires_ms);
)sql";

// Version 11 adds schedules (schedule_store.h): each schedule's definition, progress and lease,
// and its newest firings, keyed by their tick. Migrating from version 10 only creates the tables:
// no schedule is defined.
constexpr const char* kSchemaV11Additions = R"sql(
CREATE TABLE schedules(
  id TEXT PRIMARY KEY,
  definition TEXT NOT NULL,
  paused INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  last_tick_ms INTEGER NOT NULL,
  pending_tick_ms INTEGER NOT NULL,
  lease_owner TEXT NOT NULL,
  lease_expires_ms INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE TABLE schedule_firings(
  schedule_id TEXT NOT NULL,
  tick_ms INTEGER NOT NULL,
  first_tick_ms INTEGER NOT NULL,
  ticks INTEGER NOT NULL,
  recorded_ms INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  agent TEXT NOT NULL,
  client_message_id TEXT NOT NULL,
  turn_id TEXT NOT NULL,
  detail TEXT NOT NULL,
  PRIMARY KEY(schedule_id, tick_ms)
) STRICT, WITHOUT ROWID;
)sql";

}  // namespace

Status EnsureSchema(Db& db) {
  AS_ASSIGN_OR_RETURN(const std::int64_t found, db.QueryInt("PRAGMA user_version"));
  if (found > kSqliteSchemaVersion) {
    return Error(ErrorCode::kUnsupportedVersion,
                 "the database has schema version " + std::to_string(found) +
                     "; this build reads up to " + std::to_string(kSqliteSchemaVersion));
  }
  if (found == kSqliteSchemaVersion) return Status::Ok();
  AS_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  auto upgrade = [&]() -> Status {
    // Another connection may have created or migrated the schema since the version was read.
    AS_ASSIGN_OR_RETURN(const std::int64_t current, db.QueryInt("PRAGMA user_version"));
    if (current >= kSqliteSchemaVersion) return Status::Ok();
    if (current == 0) AS_RETURN_IF_ERROR(db.Exec(kSchemaV1));
    if (current <= 1) AS_RETURN_IF_ERROR(db.Exec(kSchemaV2Additions));
    if (current <= 2) AS_RETURN_IF_ERROR(db.Exec(kSchemaV3Additions));
    if (current <= 3) AS_RETURN_IF_ERROR(db.Exec(kSchemaV4Additions));
    if (current <= 4) AS_RETURN_IF_ERROR(db.Exec(SchemaV5Additions()));
    if (current <= 5) AS_RETURN_IF_ERROR(db.Exec(kSchemaV6Additions));
    if (current <= 6) AS_RETURN_IF_ERROR(db.Exec(kSchemaV7Changes));
    if (current <= 7) AS_RETURN_IF_ERROR(db.Exec(kSchemaV8Additions));
    if (current <= 8) AS_RETURN_IF_ERROR(db.Exec(SchemaV9Changes()));
    if (current <= 9) AS_RETURN_IF_ERROR(db.Exec(kSchemaV10Additions));
    AS_RETURN_IF_ERROR(db.Exec(kSchemaV11Additions));
    return db.Exec("PRAGMA user_version = " + std::to_string(kSqliteSchemaVersion));
  };
  Status created = upgrade();
  if (!created.ok()) {
    (void)db.Exec("ROLLBACK");
    return created;
  }
  return db.Exec("COMMIT");
}

}  // namespace agentstream::sqlite

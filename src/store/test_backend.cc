#include "store/test_backend.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "pg/pg.h"
#include "pg/testing/scratch_schema.h"
#include "store/log_state.h"
#include "store/memory_log.h"
#include "store/postgres/postgres_log.h"
#include "store/record_batch.h"
#include "store/sqlite/fault_vfs.h"
#include "store/sqlite/sqlite_log.h"
#include "store/testing/memory_log_peer.h"

namespace agentstream::testing {

namespace {

// The record batch `data` (seqs [first, last]) with `record` in place of the stored one of its seq,
// under `checksum` (nullopt: the right one).
std::string Rewrite(const std::string& data, std::uint32_t format, Seq first, Seq last,
                    const EventRecord& record, std::optional<std::uint64_t> checksum) {
  std::vector<store_internal::StoredRow> rows;
  Status decoded = store_internal::DecodeBatch(data, format, first, last, first, last, rows);
  if (!decoded.ok()) throw std::runtime_error(decoded.ToString());
  std::string rewritten;
  for (auto& row : rows) {
    if (row.record.seq == record.seq) {
      row.record = record;
      row.checksum = checksum.value_or(store_internal::RecordChecksum(record));
    }
    store_internal::EncodeRecord(row, rewritten);
  }
  return rewritten;
}

class MemoryBackend final : public Backend {
 public:
  EventLog& log() override { return log_; }
  void Reopen() override { MemoryLogPeer::SimulateReopen(log_); }
  void FailSyncs(bool fail) override {
    if (fail) MemoryLogPeer::FailNextCommit(log_);
  }
  void InjectRaw(const EventRecord& record, std::optional<std::uint64_t> checksum) override {
    MemoryLogPeer::InjectRawRecord(log_, record, checksum);
  }

 private:
  MemoryEventLog log_;
};

class SqliteBackend final : public Backend {
 public:
  SqliteBackend(bool overlap_syncs, std::size_t search_slices)
      : overlap_syncs_(overlap_syncs), search_slices_(search_slices) {
    char tmpl[] = "/tmp/agentstream-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    sqlite::RegisterFaultVfs();
    Open();
  }
  ~SqliteBackend() override {
    log_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  EventLog& log() override { return *log_; }
  void Reopen() override {
    log_.reset();
    Open();
  }
  void FailSyncs(bool fail) override { sqlite::SetFailSyncs(fail); }
  // Rewrites the record batch that holds record.seq with `record` in place of the stored one.
  void InjectRaw(const EventRecord& record, std::optional<std::uint64_t> checksum) override {
    sqlite3* db = nullptr;
    sqlite3_open((dir_ + "/log.db").c_str(), &db);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* find = nullptr;
    sqlite3_prepare_v2(
        db,
        "SELECT e.rowid, e.first_seq, e.last_seq, e.format, e.data FROM events e "
        "JOIN sessions s ON s.key = e.session WHERE s.id = ? AND e.epoch = ? AND e.first_seq <= ? "
        "ORDER BY e.first_seq DESC LIMIT 1",
        -1, &find, nullptr);
    sqlite3_bind_text(find, 1, record.session.str().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(find, 2, static_cast<sqlite3_int64>(record.epoch.value()));
    sqlite3_bind_int64(find, 3, static_cast<sqlite3_int64>(record.seq.value()));
    if (sqlite3_step(find) != SQLITE_ROW) throw std::runtime_error("no batch holds the record");
    const sqlite3_int64 rowid = sqlite3_column_int64(find, 0);
    const Seq first(sqlite3_column_int64(find, 1)), last(sqlite3_column_int64(find, 2));
    const std::string data(static_cast<const char*>(sqlite3_column_blob(find, 4)),
                           sqlite3_column_bytes(find, 4));
    const auto format = static_cast<std::uint32_t>(sqlite3_column_int64(find, 3));
    sqlite3_finalize(find);
    const std::string rewritten = Rewrite(data, format, first, last, record, checksum);
    sqlite3_stmt* update = nullptr;
    sqlite3_prepare_v2(db, "UPDATE events SET data = ? WHERE rowid = ?", -1, &update, nullptr);
    sqlite3_bind_blob(update, 1, rewritten.data(), static_cast<int>(rewritten.size()),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(update, 2, rowid);
    const int rc = sqlite3_step(update);
    sqlite3_finalize(update);
    sqlite3_close(db);
    if (rc != SQLITE_DONE) throw std::runtime_error("raw update failed");
  }

 private:
  void Open() {
    SqliteLogOptions options;
    options.path = dir_ + "/log.db";
    options.vfs = sqlite::kFaultVfsName;
    options.overlap_syncs = overlap_syncs_;
    options.min_overlapped_requests = 1;  // every append commit takes the overlapped path
    options.search_slices = search_slices_;
    auto opened = OpenSqliteEventLog(options);
    if (!opened.ok()) throw std::runtime_error(opened.status().ToString());
    log_ = std::move(opened).value();
  }

  const bool overlap_syncs_;
  const std::size_t search_slices_;
  std::string dir_;
  std::unique_ptr<EventLog> log_;
};

// The PostgreSQL server named by AGENTSTREAM_TEST_PG (a libpq connection string), each backend in
// a fresh schema of its own, dropped at the end.
class PostgresBackend final : public Backend {
 public:
  PostgresBackend(std::string conninfo, std::size_t search_slices) : search_slices_(search_slices) {
    auto scratch = pg::testing::ScratchSchema::Create(std::move(conninfo), "t");
    if (!scratch.ok()) throw std::runtime_error(scratch.status().ToString());
    scratch_ = std::move(scratch).value();
    Open();
  }
  ~PostgresBackend() override { log_.reset(); }
  EventLog& log() override { return *log_; }
  void Reopen() override {
    log_.reset();
    Open();
  }
  bool CanFailSyncs() const override { return false; }
  void FailSyncs(bool) override {}
  // Rewrites the record batch that holds record.seq with `record` in place of the stored one.
  void InjectRaw(const EventRecord& record, std::optional<std::uint64_t> checksum) override {
    auto conn = pg::Conn::Open(scratch_->conninfo());
    if (!conn.ok()) throw std::runtime_error(conn.status().ToString());
    Check(conn->ExecScript("SET search_path TO " + scratch_->name()));
    auto found = conn->Exec(
        "SELECT e.session, e.epoch, e.first_seq, e.last_seq, e.format, e.data FROM events e "
        "JOIN sessions s ON s.key = e.session WHERE s.id = $1 AND e.epoch = $2 AND "
        "e.first_seq <= $3 ORDER BY e.first_seq DESC LIMIT 1",
        {record.session.str(), static_cast<std::int64_t>(record.epoch.value()),
         static_cast<std::int64_t>(record.seq.value())});
    if (!found.ok() || found->size() == 0) throw std::runtime_error("no batch holds the record");
    const Seq first(found->Int(0, 2)), last(found->Int(0, 3));
    const std::string rewritten =
        Rewrite(found->Bytes(0, 5), static_cast<std::uint32_t>(found->Int(0, 4)), first, last,
                record, checksum);
    Check(conn->Exec("UPDATE events SET data = $1 WHERE session = $2 AND epoch = $3 AND "
                     "first_seq = $4",
                     {pg::Param::Bytes(rewritten), found->Int(0, 0), found->Int(0, 1),
                      found->Int(0, 2)})
              .status());
  }

 private:
  static void Check(const Status& status) {
    if (!status.ok()) throw std::runtime_error(status.ToString());
  }
  void Open() {
    PostgresLogOptions options;
    options.conninfo = scratch_->conninfo();
    options.schema = scratch_->name();
    options.search_slices = search_slices_;
    auto opened = OpenPostgresEventLog(options);
    if (!opened.ok()) throw std::runtime_error(opened.status().ToString());
    log_ = std::move(opened).value();
  }

  const std::size_t search_slices_;
  std::unique_ptr<pg::testing::ScratchSchema> scratch_;  // dropped after the log closes
  std::unique_ptr<EventLog> log_;
};

}  // namespace

// "sqlite" syncs every append commit on the WalSyncer thread; "sqlite_serial" syncs every commit
// inside COMMIT. (The default mixes both by commit size; the crash test runs the default.)
// "postgres" needs AGENTSTREAM_TEST_PG (tools/test.sh starts a server and sets it).
std::vector<std::string> BackendNames() {
  return {"memory", "sqlite", "sqlite_serial", "postgres"};
}

std::unique_ptr<Backend> MakeBackend(const std::string& name, std::size_t search_slices) {
  if (name == "memory") return std::make_unique<MemoryBackend>();
  if (name == "sqlite") return std::make_unique<SqliteBackend>(true, search_slices);
  if (name == "sqlite_serial") return std::make_unique<SqliteBackend>(false, search_slices);
  if (name == "postgres") {
    const std::optional<std::string> server = pg::testing::ScratchSchema::Server();
    if (!server) return nullptr;
    return std::make_unique<PostgresBackend>(*server, search_slices);
  }
  throw std::invalid_argument("unknown backend " + name);
}

bool CheckFourOutcomes(const Result<std::vector<Status>>& outcomes) {
  EXPECT_TRUE(outcomes.ok()) << outcomes.status().ToString();
  if (!outcomes.ok() || outcomes->size() != 4) {
    ADD_FAILURE() << "four outcomes expected";
    return false;
  }
  const std::vector<Status>& o = *outcomes;
  EXPECT_TRUE(o[0].ok()) << o[0].ToString();
  EXPECT_EQ(o[1].code(), ErrorCode::kConflict) << o[1].ToString();
  EXPECT_TRUE(o[2].ok() || o[2].code() == ErrorCode::kInvalidArgument) << o[2].ToString();
  EXPECT_TRUE(o[3].ok()) << o[3].ToString();
  return o[2].ok();
}

}  // namespace agentstream::testing

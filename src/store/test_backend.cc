#include "store/test_backend.h"

#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "store/log_state.h"
#include "store/memory_log.h"
#include "store/sqlite/fault_vfs.h"
#include "store/sqlite_log.h"

namespace agentstream::testing {

namespace {

class MemoryBackend final : public Backend {
 public:
  EventLog& log() override { return log_; }
  void Reopen() override { log_.SimulateReopen(); }
  void FailSyncs(bool fail) override {
    if (fail) log_.FailNextCommit();
  }
  void InjectRaw(const EventRecord& record, std::optional<std::uint64_t> checksum) override {
    log_.InjectRawRecord(record, checksum);
  }

 private:
  MemoryEventLog log_;
};

class SqliteBackend final : public Backend {
 public:
  SqliteBackend() {
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
  void InjectRaw(const EventRecord& record, std::optional<std::uint64_t> checksum) override {
    sqlite3* db = nullptr;
    sqlite3_open((dir_ + "/log.db").c_str(), &db);
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db,
                       "INSERT OR REPLACE INTO events(session, epoch, seq, time, kind, format, turn, payload, checksum) "
                       "SELECT key, ?, ?, ?, ?, ?, ?, ?, ? FROM sessions WHERE id = ?",
                       -1, &stmt, nullptr);
    sqlite3_bind_int64(stmt, 1, static_cast<sqlite3_int64>(record.epoch.value()));
    sqlite3_bind_int64(stmt, 2, static_cast<sqlite3_int64>(record.seq.value()));
    sqlite3_bind_int64(stmt, 3, record.time);
    sqlite3_bind_int64(stmt, 4, record.kind);
    sqlite3_bind_int64(stmt, 5, record.format);
    if (record.turn) sqlite3_bind_text(stmt, 6, record.turn->str().c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(stmt, 7, record.payload.data(), static_cast<int>(record.payload.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(stmt, 8, static_cast<sqlite3_int64>(checksum.value_or(store_internal::RecordChecksum(record))));
    sqlite3_bind_text(stmt, 9, record.session.str().c_str(), -1, SQLITE_TRANSIENT);
    const int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    if (rc != SQLITE_DONE) throw std::runtime_error("raw insert failed");
  }

 private:
  void Open() {
    SqliteLogOptions options;
    options.path = dir_ + "/log.db";
    options.vfs = sqlite::kFaultVfsName;
    auto opened = OpenSqliteEventLog(options);
    if (!opened.ok()) throw std::runtime_error(opened.status().ToString());
    log_ = std::move(opened).value();
  }

  std::string dir_;
  std::unique_ptr<EventLog> log_;
};

}  // namespace

std::vector<std::string> BackendNames() { return {"memory", "sqlite"}; }

std::unique_ptr<Backend> MakeBackend(const std::string& name) {
  if (name == "memory") return std::make_unique<MemoryBackend>();
  if (name == "sqlite") return std::make_unique<SqliteBackend>();
  throw std::invalid_argument("unknown backend " + name);
}

}  // namespace agentstream::testing

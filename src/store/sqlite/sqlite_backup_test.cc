#include "store/sqlite/sqlite_backup.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/event_codec.h"
#include "sqlite/db.h"
#include "store/sqlite/sqlite_log.h"
#include "store/testing/events.h"
#include "testing/file_size_limit.h"
#include "testing/temp_dir.h"

namespace agentstream {
namespace {

using agentstream::testing::Note;

std::unique_ptr<EventLog> Open(const std::string& path) {
  auto opened = OpenSqliteEventLog(SqliteLogOptions{.path = path});
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(*opened) : nullptr;
}

// `sessions` sessions s0, s1, ... of `events` notes each, about 1 KiB apiece.
void Fill(EventLog& log, int sessions, int events) {
  for (int s = 0; s < sessions; ++s) {
    const std::string id = "s" + std::to_string(s);
    std::vector<NewEvent> initial;
    for (int i = 1; i <= events; ++i)
      initial.push_back(Note(id + "#" + std::to_string(i) + std::string(1000, 'x')));
    ASSERT_TRUE(log.CreateSession(SessionId(id), SessionMeta{"scripted", "/w", id}, initial).ok());
  }
}

// Every event of the session's current epoch, as (seq, payload).
std::vector<std::pair<std::uint64_t, std::string>> ReadAll(EventLog& log, const SessionId& id) {
  std::vector<std::pair<std::uint64_t, std::string>> out;
  Seq from(1);
  while (true) {
    auto page =
        log.Read(ReadRequest{id, std::nullopt, ReadDirection::kForward, from, 1000, 1 << 24});
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) return out;
    for (const EventRecord& e : page->events) out.emplace_back(e.seq.value(), e.payload);
    if (page->events.empty() || !page->has_newer) return out;
    from = page->events.back().seq.next();
  }
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class SqliteBackupTest : public ::testing::Test {
 protected:
  // A store of 3 sessions at `dest`, closed; returns its bytes.
  std::string MakeDestination() {
    auto log = Open(dest_);
    Fill(*log, 1, 3);
    log.reset();
    return Bytes(dest_);
  }
  // A closed store of 4 sessions x 40 events at store_, backed up to backup_.
  void MakeBackup() {
    {
      auto log = Open(store_);
      Fill(*log, 4, 40);
    }
    auto backup = BackupSqliteStore(store_, backup_);
    ASSERT_TRUE(backup.ok()) << backup.status().ToString();
  }
  // Asserts that a restore from `backup` fails with `code` and leaves the destination as
  // `before` with no temporary file beside it.
  void ExpectRefused(const std::string& backup, ErrorCode code, const std::string& before,
                     SqliteRestoreOptions options = {}) {
    auto restored = RestoreSqliteStore(backup, dest_, options);
    ASSERT_FALSE(restored.ok());
    EXPECT_EQ(restored.status().code(), code) << restored.status().ToString();
    EXPECT_EQ(Bytes(dest_), before) << "the destination changed";
    EXPECT_FALSE(std::filesystem::exists(dest_ + ".restoring"));
  }

  test_support::TempDir dir_{"sqlite-backup"};
  std::string store_ = dir_.File("store.db");
  std::string backup_ = dir_.File("backup.db");
  std::string dest_ = dir_.File("dest.db");
};

TEST_F(SqliteBackupTest, CopiesTheStoreAsOfItsStartWhileAppendsCommitBetweenSteps) {
  auto live = Open(store_);
  Fill(*live, 4, 100);  // ~400 KiB: about a hundred 4 KiB pages
  int appended = 0;
  SqliteBackupOptions options;
  options.pages_per_step = 4;
  options.progress = [&](std::int64_t, std::int64_t) {
    // A commit by another connection between every two steps: a backup that began a new read
    // per step would restart here each time and never end.
    AppendRequest request;
    request.session = SessionId("s" + std::to_string(appended % 4));
    request.events = {Note("during the backup " + std::to_string(appended))};
    ASSERT_TRUE(live->Append(request).ok());
    ++appended;
  };
  auto report = BackupSqliteStore(store_, backup_, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(appended, 10);
  EXPECT_EQ(report->sessions, 4);
  EXPECT_LE(report->steps, report->pages / 4 + 2) << "the backup restarted";
  EXPECT_FALSE(std::filesystem::exists(backup_ + ".partial"));
  EXPECT_FALSE(std::filesystem::exists(backup_ + "-wal"));
  EXPECT_EQ(Bytes(backup_)[18], 1) << "the backup is a rollback-journal file, not WAL";

  auto copy = Open(backup_);
  for (int s = 0; s < 4; ++s) {
    const SessionId id("s" + std::to_string(s));
    const auto copied = ReadAll(*copy, id);
    const auto now = ReadAll(*live, id);
    ASSERT_EQ(copied.size(), 100u) << "the snapshot of the backup's start: " << id.str();
    EXPECT_GT(now.size(), copied.size());
    for (std::size_t i = 0; i < copied.size(); ++i) {
      EXPECT_EQ(copied[i].first, i + 1);
      EXPECT_EQ(copied[i], now[i]);
    }
  }
}

TEST_F(SqliteBackupTest, RefusesAnExistingTargetAndAMissingStore) {
  MakeBackup();
  const std::string before = Bytes(backup_);
  EXPECT_EQ(BackupSqliteStore(store_, backup_).status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(Bytes(backup_), before);
  EXPECT_EQ(BackupSqliteStore(dir_.File("none.db"), dir_.File("b2.db")).status().code(),
            ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("none.db")));
}

TEST_F(SqliteBackupTest, RestoresIntoAMissingOrEmptyStore) {
  MakeBackup();
  auto restored = RestoreSqliteStore(backup_, dest_);
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->sessions, 4);
  EXPECT_EQ(restored->events, 160);
  EXPECT_EQ(restored->schema_version, kSqliteSchemaVersion);
  EXPECT_FALSE(std::filesystem::exists(dest_ + ".restoring"));
  auto original = Open(store_);
  auto log = Open(dest_);
  for (int s = 0; s < 4; ++s) {
    const SessionId id("s" + std::to_string(s));
    EXPECT_EQ(ReadAll(*log, id), ReadAll(*original, id));
  }
}

TEST_F(SqliteBackupTest, RefusesADestinationWithSessionsUnlessForced) {
  MakeBackup();
  const std::string before = MakeDestination();
  ExpectRefused(backup_, ErrorCode::kAlreadyExists, before);
  auto forced = RestoreSqliteStore(backup_, dest_, {.force = true});
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_EQ(forced->replaced_sessions, 1);
  auto log = Open(dest_);
  auto sessions = log->ListSessions("", 100);
  ASSERT_TRUE(sessions.ok());
  EXPECT_EQ(sessions->size(), 4u);
  EXPECT_EQ(ReadAll(*log, SessionId("s3")).size(), 40u);
}

TEST_F(SqliteBackupTest, RefusesAWalLeftWithoutItsDatabase) {
  MakeBackup();
  std::ofstream(dest_ + "-wal") << "frames of a store that is gone";
  auto restored = RestoreSqliteStore(backup_, dest_);
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_FALSE(std::filesystem::exists(dest_));
}

TEST_F(SqliteBackupTest, RefusesADestinationInUse) {
  MakeBackup();
  auto daemon = Open(dest_);
  Fill(*daemon, 1, 1);
  auto restored = RestoreSqliteStore(backup_, dest_, {.force = true});
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.status().code(), ErrorCode::kUnavailable) << restored.status().ToString();
  EXPECT_EQ(ReadAll(*daemon, SessionId("s0")).size(), 1u);
  auto sessions = daemon->ListSessions("", 100);
  ASSERT_TRUE(sessions.ok());
  EXPECT_EQ(sessions->size(), 1u);
}

TEST_F(SqliteBackupTest, RefusesABackupOfANewerSchema) {
  MakeBackup();
  {
    auto db = sqlite::Db::Open(backup_, {});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("PRAGMA user_version = " + std::to_string(kSqliteSchemaVersion + 1)).ok());
  }
  const std::string before = MakeDestination();
  auto restored = RestoreSqliteStore(backup_, dest_, {.force = true});
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.status().code(), ErrorCode::kUnsupportedVersion);
  EXPECT_NE(restored.status().message().find("newer"), std::string::npos);
  EXPECT_EQ(Bytes(dest_), before);
}

TEST_F(SqliteBackupTest, RefusesMissingForeignAndCorruptBackups) {
  MakeBackup();
  const std::string before = MakeDestination();
  ExpectRefused(dir_.File("missing.db"), ErrorCode::kNotFound, before, {.force = true});

  const std::string text = dir_.File("notes.txt");
  std::ofstream(text) << std::string(8192, 'n');
  ExpectRefused(text, ErrorCode::kCorruption, before, {.force = true});

  const std::string foreign = dir_.File("foreign.db");
  {
    auto db = sqlite::Db::Open(foreign, {.create = true});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)").ok());
  }
  ExpectRefused(foreign, ErrorCode::kInvalidArgument, before, {.force = true});

  // Scribble over every page but the first: the header reads, the b-trees do not.
  std::string bytes = Bytes(backup_);
  for (std::size_t i = 4096; i < bytes.size(); i += 7) bytes[i] = static_cast<char>(i * 31);
  const std::string corrupt = dir_.File("corrupt.db");
  std::ofstream(corrupt, std::ios::binary) << bytes;
  ExpectRefused(corrupt, ErrorCode::kCorruption, before, {.force = true});
}

TEST_F(SqliteBackupTest, AFullDiskLeavesTheDestinationAsItWas) {
  MakeBackup();
  const std::string before = MakeDestination();
  // Files of this process cannot grow past 64 KiB: the copy of the ~200 KiB backup fails.
  auto restored = [&] {
    test_support::FileSizeLimit full(64 * 1024);
    return RestoreSqliteStore(backup_, dest_, {.force = true});
  }();
  ASSERT_FALSE(restored.ok());
  EXPECT_EQ(restored.status().code(), ErrorCode::kIoError) << restored.status().ToString();
  EXPECT_NE(restored.status().message().find("cannot write " + dest_ + ".restoring"),
            std::string::npos)
      << restored.status().message();
  EXPECT_EQ(Bytes(dest_), before);
  EXPECT_FALSE(std::filesystem::exists(dest_ + ".restoring"));
  EXPECT_FALSE(std::filesystem::exists(dest_ + ".restoring-journal"));
}

TEST_F(SqliteBackupTest, ABackupOntoAFullDiskFailsAndLeavesNothing) {
  {
    auto log = Open(store_);
    Fill(*log, 4, 40);
  }
  // The ~200 KiB store does not fit under 64 KiB: the backup fails part way.
  auto backup = [&] {
    test_support::FileSizeLimit full(64 * 1024);
    return BackupSqliteStore(store_, backup_);
  }();
  ASSERT_FALSE(backup.ok());
  EXPECT_EQ(backup.status().code(), ErrorCode::kIoError) << backup.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(backup_));
  EXPECT_FALSE(std::filesystem::exists(backup_ + ".partial"));
  EXPECT_FALSE(std::filesystem::exists(backup_ + ".partial-journal"));
  // With room again the same command succeeds, and the store was never touched.
  auto again = BackupSqliteStore(store_, backup_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->sessions, 4);
  auto copy = Open(backup_);
  ASSERT_TRUE(copy);
  EXPECT_EQ(ReadAll(*copy, SessionId("s3")).size(), 40u);
}

}  // namespace
}  // namespace agentstream

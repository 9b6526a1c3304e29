// The RAII layer's error paths against real SQLite files: what cannot be opened, what is not a
// database, bad SQL, constraint failures, locks held by another connection, read-only files,
// values over SQLite's length limit, and the statements and connections left usable (or closed)
// after each.
#include "sqlite/db.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/temp_dir.h"

namespace agentstream::sqlite {
namespace {

using test_support::TempDir;
using test_support::WriteTextFile;

OpenOptions Create() {
  OpenOptions options;
  options.create = true;
  return options;
}

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Db> db = Db::Open(path_, Create());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    ASSERT_TRUE(db_.Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL)").ok());
  }

  TempDir dir_{"sqlite-db"};
  std::string path_ = dir_.File("t.db");
  Db db_;
};

TEST(DbOpen, AMissingFileIsNotCreatedUnlessAskedAndTheErrorNamesIt) {
  TempDir dir("sqlite-open");
  const std::string path = dir.File("missing.db");
  Result<Db> db = Db::Open(path, OpenOptions{});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(db.status().message().find(path), std::string::npos) << db.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(path));

  Result<Db> in_missing_dir = Db::Open(dir.File("no/such/dir/x.db"), Create());
  ASSERT_FALSE(in_missing_dir.ok());
  EXPECT_EQ(in_missing_dir.status().code(), ErrorCode::kUnavailable);
}

TEST(DbOpen, AFileThatIsNotADatabaseIsCorruptionAtTheFirstRead) {
  TempDir dir("sqlite-notadb");
  const std::string path = dir.File("garbage.db");
  WriteTextFile(path, std::string(4096, 'x'));
  // SQLite reads the header lazily: the open succeeds, the first statement fails.
  Result<Db> db = Db::Open(path, OpenOptions{});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Result<std::int64_t> count = db->QueryInt("SELECT count(*) FROM sqlite_master");
  ASSERT_FALSE(count.ok());
  EXPECT_EQ(count.status().code(), ErrorCode::kCorruption) << count.status().ToString();
}

TEST_F(DbTest, BadSqlFailsToPrepareWithSqlitesOwnMessage) {
  Result<Stmt> stmt = db_.Prepare("SELEC 1");
  ASSERT_FALSE(stmt.ok());
  EXPECT_NE(stmt.status().message().find("syntax error"), std::string::npos)
      << stmt.status().ToString();
  Result<Stmt> missing = db_.Prepare("SELECT * FROM no_such_table");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no_such_table"), std::string::npos);
  EXPECT_NE(db_.LastError().find("no_such_table"), std::string::npos);
}

TEST_F(DbTest, ExecStopsAtTheFirstFailureAndKeepsWhatRanBefore) {
  const Status status = db_.Exec(
      "INSERT INTO t VALUES (1, 'a'); INSERT INTO t VALUES (1, 'b'); "
      "INSERT INTO t VALUES (2, 'c')");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), ErrorCode::kInternal) << status.ToString();  // a constraint
  EXPECT_EQ(db_.QueryInt("SELECT count(*) FROM t").value(), 1);
  EXPECT_EQ(db_.QueryInt("SELECT id FROM t").value(), 1);
}

TEST_F(DbTest, AFailedStepResetsTheStatementWhichThenRunsAgain) {
  Result<Stmt> insert = db_.Prepare("INSERT INTO t VALUES (?1, ?2)");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE(insert->Bind(1, std::int64_t{1}).Bind(2, "one").Exec().ok());
  const Status dup = insert->Bind(1, std::int64_t{1}).Bind(2, "again").Exec();
  EXPECT_EQ(dup.code(), ErrorCode::kInternal) << dup.ToString();
  // NULL into a NOT NULL column: also a constraint, also reported, not a crash.
  const Status null = insert->Bind(1, std::int64_t{2}).BindNull(2).Exec();
  EXPECT_EQ(null.code(), ErrorCode::kInternal) << null.ToString();
  ASSERT_TRUE(insert->Bind(1, std::int64_t{2}).Bind(2, "two").Exec().ok());
  EXPECT_EQ(db_.QueryInt("SELECT count(*) FROM t").value(), 2);
}

TEST_F(DbTest, AWriteLockedByAnotherConnectionIsBusy) {
  OpenOptions impatient;
  impatient.busy_timeout_ms = 0;
  Result<Db> other = Db::Open(path_, impatient);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(db_.Exec("BEGIN IMMEDIATE").ok());
  const Status write = other->Exec("INSERT INTO t VALUES (1, 'x')");
  ASSERT_FALSE(write.ok());
  EXPECT_TRUE(other->Busy()) << write.ToString();
  EXPECT_FALSE(db_.Busy());
  ASSERT_TRUE(db_.Exec("COMMIT").ok());
  // The lock gone, the same connection writes.
  ASSERT_TRUE(other->Exec("INSERT INTO t VALUES (1, 'x')").ok());
  EXPECT_FALSE(other->Busy());
}

TEST_F(DbTest, AReadOnlyConnectionReadsAndRefusesWrites) {
  ASSERT_TRUE(db_.Exec("INSERT INTO t VALUES (1, 'a')").ok());
  OpenOptions read_only;
  read_only.read_only = true;
  read_only.create = true;  // ignored for a read-only connection
  Result<Db> reader = Db::Open(path_, read_only);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->QueryInt("SELECT count(*) FROM t").value(), 1);
  const Status write = reader->Exec("INSERT INTO t VALUES (2, 'b')");
  EXPECT_EQ(write.code(), ErrorCode::kUnavailable) << write.ToString();

  Result<Db> missing = Db::Open(dir_.File("other.db"), read_only);
  EXPECT_FALSE(missing.ok());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("other.db")));
}

TEST_F(DbTest, AValueSqliteRefusesToBindFailsTheStepAndIsNeverStoredAsNull) {
  sqlite3_limit(db_.raw(), SQLITE_LIMIT_LENGTH, 1000);
  ASSERT_TRUE(db_.Exec("CREATE TABLE n(v TEXT)").ok());  // NULL would be accepted here
  Result<Stmt> insert = db_.Prepare("INSERT INTO n VALUES (?1)");
  ASSERT_TRUE(insert.ok());
  const std::string big(2000, 'x');
  const Status too_big = insert->Bind(1, big).Exec();
  EXPECT_EQ(too_big.code(), ErrorCode::kTooLarge) << too_big.ToString();
  const Status blob = insert->BindBlob(1, big).Exec();
  EXPECT_EQ(blob.code(), ErrorCode::kTooLarge) << blob.ToString();
  const Status no_such_parameter = insert->Bind(1, "a").Bind(2, "b").Exec();
  EXPECT_FALSE(no_such_parameter.ok());
  EXPECT_EQ(db_.QueryInt("SELECT count(*) FROM n").value(), 0);
  // The refusal goes with the reset: the statement binds and runs again.
  ASSERT_TRUE(insert->Bind(1, "fits").Exec().ok());
  EXPECT_EQ(db_.QueryInt("SELECT count(*) FROM n WHERE v = 'fits'").value(), 1);
}

TEST_F(DbTest, QueryIntIsZeroForNoRowAndForNull) {
  EXPECT_EQ(db_.QueryInt("SELECT id FROM t").value(), 0);
  EXPECT_EQ(db_.QueryInt("SELECT NULL").value(), 0);
  EXPECT_EQ(db_.QueryInt("SELECT 42").value(), 42);
  EXPECT_FALSE(db_.QueryInt("SELECT nope()").ok());
}

TEST_F(DbTest, TextKeepsEmbeddedZerosAndNullIsEmpty) {
  const std::string text("a\0b", 3);
  Result<Stmt> insert = db_.Prepare("INSERT INTO t VALUES (1, ?1)");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE(insert->BindBlob(1, text, /*copy=*/true).Exec().ok());
  Result<Stmt> read = db_.Prepare("SELECT v, NULL FROM t");
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(read->Step().value());
  EXPECT_EQ(read->Text(0), text);
  EXPECT_TRUE(read->IsNull(1));
  EXPECT_EQ(read->Text(1), "");
  EXPECT_FALSE(read->Step().value());
}

TEST_F(DbTest, ACachedStatementIsPreparedOnceAndResetWhenItsHandleGoes) {
  ASSERT_TRUE(db_.Exec("INSERT INTO t VALUES (1, 'a'), (2, 'b')").ok());
  const std::string sql = "SELECT id FROM t ORDER BY id";
  sqlite3_stmt* first = nullptr;
  {
    Result<Db::CachedStmt> stmt = db_.Cached(sql);
    ASSERT_TRUE(stmt.ok());
    first = (*stmt)->raw();
    ASSERT_TRUE((*stmt)->Step().value());
    EXPECT_EQ((*stmt)->Int(0), 1);
  }  // reset here, mid-result
  Result<Db::CachedStmt> again = db_.Cached(sql);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->raw(), first);
  ASSERT_TRUE((*again)->Step().value());
  EXPECT_EQ((*again)->Int(0), 1);  // from the first row again

  EXPECT_FALSE(db_.Cached("SELECT FROM").ok());
}

TEST_F(DbTest, AMovedConnectionKeepsItsStatementsAndTheOldOneIsClosed) {
  ASSERT_TRUE(db_.Cached("SELECT count(*) FROM t").ok());
  Db moved = std::move(db_);
  EXPECT_EQ(db_.raw(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(db_.LastError(), "no connection");
  EXPECT_FALSE(db_.Busy());
  Result<Db::CachedStmt> stmt = moved.Cached("SELECT count(*) FROM t");
  ASSERT_TRUE(stmt.ok());
  ASSERT_TRUE((*stmt)->Step().value());
  EXPECT_EQ((*stmt)->Int(0), 0);
}

TEST(FromSqlite, MapsResultCodesToStatusCodes) {
  EXPECT_TRUE(FromSqlite(SQLITE_OK, nullptr, "x").ok());
  EXPECT_TRUE(FromSqlite(SQLITE_DONE, nullptr, "x").ok());
  EXPECT_TRUE(FromSqlite(SQLITE_ROW, nullptr, "x").ok());
  EXPECT_EQ(FromSqlite(SQLITE_CORRUPT, nullptr, "x").code(), ErrorCode::kCorruption);
  EXPECT_EQ(FromSqlite(SQLITE_NOTADB, nullptr, "x").code(), ErrorCode::kCorruption);
  EXPECT_EQ(FromSqlite(SQLITE_CONSTRAINT_UNIQUE, nullptr, "x").code(), ErrorCode::kInternal);
  EXPECT_EQ(FromSqlite(SQLITE_TOOBIG, nullptr, "x").code(), ErrorCode::kTooLarge);
  EXPECT_EQ(FromSqlite(SQLITE_READONLY_DBMOVED, nullptr, "x").code(), ErrorCode::kUnavailable);
  EXPECT_EQ(FromSqlite(SQLITE_IOERR_FSYNC, nullptr, "x").code(), ErrorCode::kIoError);
  EXPECT_EQ(FromSqlite(SQLITE_FULL, nullptr, "write").message(), "write: database or disk is full");
}

}  // namespace
}  // namespace agentstream::sqlite

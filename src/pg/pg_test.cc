#include "pg/pg.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pg/testing/scratch_schema.h"

namespace agentstream::pg {
namespace {

// `conninfo` with `keyword=value` added, in its own syntax (a URL or keyword/value pairs).
std::string With(const std::string& conninfo, const std::string& keyword,
                 const std::string& value) {
  if (conninfo.rfind("postgres", 0) == 0)
    return conninfo + (conninfo.find('?') == std::string::npos ? "?" : "&") + keyword + "=" + value;
  return conninfo + " " + keyword + "=" + value;
}

TEST(ConnTest, AConnectionCarriesTheTimeoutsThatBoundASilentServer) {
  const auto server = testing::ScratchSchema::Server();
  if (!server) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
  Result<Conn> conn = Conn::Open(*server);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  for (const auto& [keyword, value] : kConnectionDefaults) {
    if (std::string(keyword) == "connect_timeout" && std::getenv("PGCONNECT_TIMEOUT")) continue;
    EXPECT_EQ(conn->Setting(keyword), value) << keyword;
  }
  EXPECT_TRUE(conn->Exec("SELECT 1").ok());
}

TEST(ConnTest, TheConnectionStringOverridesEachDefault) {
  const auto server = testing::ScratchSchema::Server();
  if (!server) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
  Result<Conn> conn =
      Conn::Open(With(With(*server, "tcp_user_timeout", "1234"), "keepalives", "0"));
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  EXPECT_EQ(conn->Setting("tcp_user_timeout"), "1234");
  EXPECT_EQ(conn->Setting("keepalives"), "0");
  EXPECT_EQ(conn->Setting("keepalives_idle"), "5");  // the others stay
  EXPECT_TRUE(conn->Exec("SELECT 1").ok());
}

// A server that accepts the connection (the kernel does) and never answers: the attempt ends,
// kUnavailable, after the default connect_timeout (10 s) instead of waiting for ever.
TEST(ConnTest, AServerThatNeverAnswersFailsTheConnectionAttempt) {
  ::unsetenv("PGCONNECT_TIMEOUT");
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t length = sizeof address;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string conninfo =
      "host=127.0.0.1 port=" + std::to_string(ntohs(address.sin_port)) + " dbname=none user=none";
  Result<Conn> conn = Conn::Open(conninfo);
  ::close(listener);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(conn.status().message().find("timeout"), std::string::npos) << conn.status().ToString();
}

// A connection of its own to the test server; the tests skip without one.
class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto server = testing::ScratchSchema::Server();
    if (!server) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
    Result<Conn> opened = Conn::Open(*server);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    conn_ = std::move(*opened);
  }
  Conn conn_;
};

// The answers of a pipeline come back in order, one per statement.
TEST_F(PipelineTest, APipelineAnswersEachStatementInOrder) {
  const Statement statements[] = {{"BEGIN", {}},
                                  {"SELECT $1::bigint + 1", {Param(std::int64_t{41})}},
                                  {"SELECT $1::text || 'b'", {Param("a")}},
                                  {"COMMIT", {}}};
  std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
  ASSERT_EQ(answers.size(), 4u);
  for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(FirstFailure(answers), nullptr);
  EXPECT_EQ(answers[1]->Int(0, 0), 42);
  EXPECT_EQ(answers[2]->Text(0, 0), "ab");
  EXPECT_TRUE(conn_.Exec("SELECT 1").ok());  // out of pipeline mode again
}

// The server runs nothing after a failed statement, so a transaction sent with its COMMIT in one
// pipeline commits nothing of itself when one of its statements fails.
TEST_F(PipelineTest, APipelineRunsNothingAfterAFailedStatement) {
  ASSERT_TRUE(conn_.ExecScript("CREATE TEMP TABLE t(n bigint PRIMARY KEY)").ok());
  const Statement statements[] = {{"BEGIN", {}},
                                  {"INSERT INTO t VALUES(1)", {}},
                                  {"INSERT INTO t VALUES(1)", {}},  // a unique violation
                                  {"INSERT INTO t VALUES(2)", {}},
                                  {"COMMIT", {}}};
  std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
  ASSERT_EQ(answers.size(), 5u);
  EXPECT_TRUE(answers[1].ok());
  EXPECT_EQ(answers[2].status().code(), ErrorCode::kConflict);
  EXPECT_EQ(FirstFailure(answers), &answers[2]);  // the cause, not the statements it stopped
  for (std::size_t i : {3u, 4u}) {
    EXPECT_EQ(answers[i].status().code(), ErrorCode::kIoError);
    EXPECT_NE(answers[i].status().message().find("did not run"), std::string::npos);
  }
  EXPECT_FALSE(conn_.Broken());
  ASSERT_TRUE(conn_.ExecScript("ROLLBACK").ok());
  Result<Rows> count = conn_.Exec("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(count->Int(0, 0), 0);
}

// A statement whose text parameter holds a NUL fails the pipeline before anything is sent.
TEST_F(PipelineTest, APipelineWithABadParameterSendsNothing) {
  ASSERT_TRUE(conn_.ExecScript("CREATE TEMP TABLE t(s text)").ok());
  const Statement statements[] = {{"INSERT INTO t VALUES('kept?')", {}},
                                  {"INSERT INTO t VALUES($1)", {Param(std::string("a\0b", 3))}}};
  std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
  ASSERT_EQ(answers.size(), 2u);
  for (const auto& a : answers) EXPECT_EQ(a.status().code(), ErrorCode::kInvalidArgument);
  Result<Rows> count = conn_.Exec("SELECT count(*) FROM t");
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(count->Int(0, 0), 0);
}

// A server that ends the connection during a pipeline: it ran nothing after the statement it
// failed, every later answer says so, and the connection is not used again.
TEST_F(PipelineTest, APipelineWhoseServerEndsTheConnectionRunsNothingAfter) {
  const Statement statements[] = {{"SELECT pg_terminate_backend(pg_backend_pid())", {}},
                                  {"SELECT pg_sleep(0.1)", {}},
                                  {"SELECT 1", {}}};
  std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_FALSE(answers[1].ok());
  EXPECT_FALSE(answers[2].ok());
  EXPECT_TRUE(conn_.Broken());
  EXPECT_EQ(conn_.Exec("SELECT 1").status().code(), ErrorCode::kUnavailable);
}

// How many statements this connection has prepared with `sql` (the server's own account).
std::int64_t PreparedCount(Conn& conn, const std::string& sql) {
  Result<Rows> r =
      conn.Exec("SELECT count(*) FROM pg_prepared_statements WHERE statement = $1", {sql});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r->Int(0, 0) : -1;
}

// A `reuse` statement is prepared once per connection, in the round trip of its first run, and
// run by name with each run's parameters from then on, also when a pipeline holds it twice.
TEST_F(PipelineTest, AReusedStatementIsPreparedOncePerConnection) {
  const std::string sql = "SELECT $1::bigint * 2";
  EXPECT_EQ(PreparedCount(conn_, sql), 0);
  for (std::int64_t n : {1, 2, 3}) {
    const Statement statements[] = {{"BEGIN", {}},
                                    {sql, {Param(n)}, /*reuse=*/true},
                                    {sql, {Param(n + 10)}, /*reuse=*/true},
                                    {"COMMIT", {}}};
    std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
    ASSERT_EQ(answers.size(), 4u);
    for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(answers[1]->Int(0, 0), 2 * n);
    EXPECT_EQ(answers[2]->Int(0, 0), 2 * (n + 10));
    EXPECT_EQ(PreparedCount(conn_, sql), 1);
  }
  // A new connection prepares its own.
  Result<Conn> other = Conn::Open(*testing::ScratchSchema::Server());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const Statement again[] = {{sql, {Param(std::int64_t{5})}, /*reuse=*/true}};
  std::vector<Result<Rows>> answers = other->ExecPipeline(again);
  ASSERT_TRUE(answers[0].ok()) << answers[0].status().ToString();
  EXPECT_EQ(answers[0]->Int(0, 0), 10);
  EXPECT_EQ(PreparedCount(*other, sql), 1);
}

// One statement run alone: a `reuse` one is prepared once and run by name after that, with the
// same answers and errors as an unprepared one; one without `reuse` is not prepared.
TEST_F(PipelineTest, AReusedStatementRunAloneIsPreparedOnce) {
  const std::string sql = "SELECT $1::bigint + 1";
  for (std::int64_t n : {1, 2, 3}) {
    Result<Rows> r = conn_.Exec(Statement{sql, {Param(n)}, /*reuse=*/true});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->Int(0, 0), n + 1);
    EXPECT_EQ(PreparedCount(conn_, sql), 1);
  }
  const std::string plain = "SELECT $1::bigint + 2";
  Result<Rows> r = conn_.Exec(Statement{plain, {Param(std::int64_t{1})}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->Int(0, 0), 3);
  EXPECT_EQ(PreparedCount(conn_, plain), 0);
  // A unique violation is kConflict whichever way the statement ran.
  ASSERT_TRUE(conn_.ExecScript("CREATE TEMP TABLE once(k bigint PRIMARY KEY)").ok());
  const std::string insert = "INSERT INTO once(k) VALUES($1)";
  ASSERT_TRUE(conn_.Exec(Statement{insert, {Param(std::int64_t{1})}, /*reuse=*/true}).ok());
  EXPECT_EQ(conn_.Exec(Statement{insert, {Param(std::int64_t{1})}, /*reuse=*/true}).status().code(),
            ErrorCode::kConflict);
  EXPECT_FALSE(conn_.Broken());
}

// A `binary` statement's integers, text and bytea read the same as in text format, including
// negative numbers, every byte value and NULLs.
TEST_F(PipelineTest, ABinaryAnswerReadsLikeAText) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  const std::string sql =
      "SELECT $1::bigint, $2::integer, $3::smallint, $4::text, $5::bytea, NULL::bytea";
  const std::vector<Param> params = {Param(std::int64_t{-1234567890123}), Param(std::int64_t{-7}),
                                     Param(std::int64_t{300}), Param(std::string("héllo")),
                                     Param::Bytes(bytes)};
  for (const bool binary : {false, true}) {
    for (const bool reuse : {false, true}) {
      Result<Rows> r = conn_.Exec(Statement{sql, params, reuse, binary});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->Int(0, 0), -1234567890123) << binary;
      EXPECT_EQ(r->Int(0, 1), -7) << binary;
      EXPECT_EQ(r->Int(0, 2), 300) << binary;
      EXPECT_EQ(r->Text(0, 3), "héllo") << binary;
      EXPECT_EQ(r->Bytes(0, 4), bytes) << binary;
      EXPECT_TRUE(r->IsNull(0, 5)) << binary;
    }
  }
}

// A `reuse` statement the server refuses to prepare answers with the server's reason, the
// pipeline runs nothing after it, and the connection prepares it again the next time (here, a
// table that did not exist yet).
TEST_F(PipelineTest, AReusedStatementThatCannotBePreparedFailsAndIsPreparedNextTime) {
  const std::string sql = "SELECT count(*) FROM later_table WHERE n > $1";
  const Statement statements[] = {{"BEGIN", {}},
                                  {sql, {Param(std::int64_t{0})}, /*reuse=*/true},
                                  {"SELECT 1", {}},
                                  {"COMMIT", {}}};
  std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(FirstFailure(answers), &answers[1]);
  EXPECT_EQ(answers[1].status().code(), ErrorCode::kIoError);
  EXPECT_NE(answers[1].status().message().find("later_table"), std::string::npos)
      << answers[1].status().ToString();
  EXPECT_NE(answers[2].status().message().find("did not run"), std::string::npos);
  EXPECT_FALSE(conn_.Broken());
  ASSERT_TRUE(conn_.ExecScript("ROLLBACK").ok());
  EXPECT_EQ(PreparedCount(conn_, sql), 0);

  ASSERT_TRUE(conn_
                  .ExecScript("CREATE TEMP TABLE later_table(n bigint); "
                              "INSERT INTO later_table VALUES (1), (2), (3)")
                  .ok());
  answers = conn_.ExecPipeline(statements);
  for (const auto& a : answers) ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(answers[1]->Int(0, 0), 3);
  EXPECT_EQ(PreparedCount(conn_, sql), 1);
}

// A prepared statement whose result type a schema change altered fails once with the server's
// reason, and is prepared again for the next run.
TEST_F(PipelineTest, AReusedStatementThatTheSchemaOutdatedIsPreparedAgain) {
  ASSERT_TRUE(
      conn_.ExecScript("CREATE TEMP TABLE shaped(a bigint); INSERT INTO shaped VALUES (7)").ok());
  const std::string sql = "SELECT * FROM shaped WHERE a > $1";
  const Statement statements[] = {{sql, {Param(std::int64_t{0})}, /*reuse=*/true}};
  std::vector<Result<Rows>> answers = conn_.ExecPipeline(statements);
  ASSERT_TRUE(answers[0].ok()) << answers[0].status().ToString();
  ASSERT_TRUE(conn_.ExecScript("ALTER TABLE shaped ADD COLUMN b text DEFAULT 'x'").ok());
  answers = conn_.ExecPipeline(statements);
  ASSERT_FALSE(answers[0].ok());
  EXPECT_NE(answers[0].status().message().find("result type"), std::string::npos)
      << answers[0].status().ToString();
  answers = conn_.ExecPipeline(statements);
  ASSERT_TRUE(answers[0].ok()) << answers[0].status().ToString();
  EXPECT_EQ(answers[0]->Text(0, 1), "x");
}

}  // namespace
}  // namespace agentstream::pg

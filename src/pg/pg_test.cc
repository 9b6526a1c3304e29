#include "pg/pg.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

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

}  // namespace
}  // namespace agentstream::pg

// The agents endpoints' own rules over a real server: a create is idempotent by its
// clientRequestId or the Idempotency-Key header, and a cwd that is not a directory is the
// client's error (400), not the daemon's (503).
#include "server/server_test_fixture.h"

namespace agentstream::server::testing {
namespace {

class AgentsHttpTest : public ServerFixture {};

TEST_F(AgentsHttpTest, ARetriedCreateAnswersTheSameAgent) {
  const std::string body = R"({"provider":"scripted","cwd":"/tmp","clientRequestId":"r-1"})";
  json::value first = Call("POST", "/v1/agents", body);
  json::value retry = Call("POST", "/v1/agents", body);
  ASSERT_TRUE(first.is_object() && retry.is_object());
  EXPECT_EQ(first.at("id"), retry.at("id"));
  // The standard header does the same.
  const std::map<std::string, std::string> key{{"Idempotency-Key", "k-7"}};
  TestResponse a =
      HttpCall(port_, "POST", "/v1/agents", R"({"provider":"scripted","cwd":"/tmp"})", key);
  TestResponse b =
      HttpCall(port_, "POST", "/v1/agents", R"({"provider":"scripted","cwd":"/tmp"})", key);
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(ParseOrNull(a.body).at("id"), ParseOrNull(b.body).at("id"));
  EXPECT_NE(ParseOrNull(a.body).at("id"), first.at("id"));
  // The same key for another agent is a conflict.
  Call("POST", "/v1/agents", R"({"provider":"scripted","cwd":"/","clientRequestId":"r-1"})", 409);
  json::value list = Call("GET", "/v1/agents");
  EXPECT_EQ(list.at("agents").as_array().size(), 2u);
}

TEST_F(AgentsHttpTest, ACwdThatIsNotADirectoryIsRefusedAsTheClientsError) {
  json::value missing =
      Call("POST", "/v1/agents", R"({"provider":"scripted","cwd":"/no/such/dir"})", 400);
  ASSERT_TRUE(missing.is_object());
  EXPECT_EQ(missing.at("error").at("code"), "invalid_argument");
  EXPECT_NE(std::string(missing.at("error").at("message").as_string()).find("/no/such/dir"),
            std::string::npos);
  Call("POST", "/v1/agents", R"({"provider":"scripted","cwd":"/tmp\u0000x"})", 400);
  EXPECT_TRUE(Call("GET", "/v1/agents").at("agents").as_array().empty());
}

}  // namespace
}  // namespace agentstream::server::testing

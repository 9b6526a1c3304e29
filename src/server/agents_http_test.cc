// The agents endpoints' own rules over a real server: a create is idempotent by its
// clientRequestId or the Idempotency-Key header, and a cwd that is not a directory is the
// client's error (400), not the daemon's (503).
#include "server/testing/server_test_fixture.h"

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

// A title is recorded as an event and shown in every snapshot; a bad one is refused and records
// nothing. Search needs a store that keeps its index: the memory log answers 503, and a query
// with no word is the client's error.
TEST_F(AgentsHttpTest, RenameRecordsTheTitleAndSearchNeedsAStoreIndex) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  json::value renamed = Call("POST", "/v1/agents/" + id + "/title", R"({"title":"Parser work"})");
  ASSERT_TRUE(renamed.is_object());
  EXPECT_EQ(renamed.at("title"), "Parser work");
  EXPECT_EQ(Snapshot(id).at("title"), "Parser work");
  const std::size_t events = AllEvents(id).size();
  json::value bad = Call("POST", "/v1/agents/" + id + "/title", R"({"title":"two\nlines"})", 400);
  EXPECT_EQ(bad.at("error").at("code"), "invalid_argument");
  Call("POST", "/v1/agents/" + id + "/title", R"({"title":7})", 400);
  Call("POST", "/v1/agents/ses_missing/title", R"({"title":"x"})", 404);
  const json::array all = AllEvents(id);
  ASSERT_EQ(all.size(), events);
  EXPECT_EQ(Kind(all.back()), "session.titled");
  EXPECT_EQ(all.back().at("payload").at("title"), "Parser work");
  // "" clears the title.
  EXPECT_EQ(Call("POST", "/v1/agents/" + id + "/title", R"({"title":""})").at("title"), "");
  EXPECT_EQ(Snapshot(id).at("title"), "");
  EXPECT_EQ(AllEvents(id).back().at("payload").at("title"), "");

  EXPECT_EQ(Call("GET", "/v1/search?q=parser", "", 503).at("error").at("code"), "unavailable");
  Call("GET", "/v1/search?q=%22%2A%22", "", 400);
  Call("GET", "/v1/search", "", 400);
  Call("GET", "/v1/search?q=x&limit=201", "", 400);
}

}  // namespace
}  // namespace agentstream::server::testing

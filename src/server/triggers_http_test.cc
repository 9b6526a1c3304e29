// Triggers (docs/automation.md): GitHub webhook deliveries recorded in testdata/github (an issue
// opened, an issue comment, a pull request) posted signed, replayed, forged and oversized to a
// server with real sockets; and the pure parts (the triggers file, the template, the signature).
#include <fstream>
#include <sstream>

#include "consumers/signature.h"
#include "server/testing/server_test_fixture.h"
#include "server/trigger_routes.h"

namespace agentstream::server::testing {
namespace {

const std::string kTriggerSecret = "a-webhook-secret-of-some-length";

std::string GithubPayload(const std::string& name) {
  std::ifstream in(std::string(AGENTSTREAM_SOURCE_DIR) + "/src/server/testdata/github/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<std::string> NoSecretFiles(const std::string& path) {
  return Error(ErrorCode::kNotFound, "no file " + path);
}

std::vector<Trigger> ParseOrFail(const std::string& text) {
  auto parsed = ParseTriggers(text, NoSecretFiles);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : std::vector<Trigger>{};
}

class TriggersHttpTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& options) override {
    routes_ =
        std::make_unique<TriggerRoutes>(*manager_, nullptr,
                                        ParseOrFail(R"({"triggers": [
          {"id": "issues", "secret": ")" + kTriggerSecret +
                                                    R"(", "events": ["issues", "issue_comment"],
           "template": {"provider": "scripted", "cwd": "/tmp",
                        "title": "#{{issue.number}} {{issue.title}}"},
           "prompt": "Issue #{{issue.number}} ({{issue.labels.0.name}}): {{issue.title}}\n\n{{issue.body}}\n\n{{comment.body}}"},
          {"id": "reviews", "secret": ")" + kTriggerSecret +
                                                    R"(", "agent": ")" + reviewer_ + R"(",
           "prompt": "Review PR #{{pull_request.number}}: {{pull_request.title}} ({{pull_request.head.ref}} -> {{pull_request.base.ref}}) {{pull_request.milestone.title}}"}
        ]})"));
    options.triggers = routes_.get();
  }
  void TearDown() override {
    ServerFixture::TearDown();
    routes_.reset();
  }

  TestResponse Deliver(const std::string& trigger, const std::string& event,
                       const std::string& delivery, const std::string& body,
                       std::optional<std::string> signature = std::nullopt) {
    std::map<std::string, std::string> headers{
        {"content-type", "application/json"},
        {"x-github-event", event},
        {"x-github-delivery", delivery},
        {"x-hub-signature-256",
         signature.value_or("sha256=" + consumers::HmacSha256Hex(kTriggerSecret, body))}};
    return HttpCall(port_, "POST", "/v1/triggers/" + trigger, body, headers);
  }
  std::size_t Count(const std::string& agent, const std::string& kind) {
    std::size_t n = 0;
    for (const json::value& e : AllEvents(agent)) n += Kind(e) == kind;
    return n;
  }

  // The agent "reviews" prompts: the one a create with this client request id makes.
  const std::string reviewer_ = runtime::SessionIdForRequest("reviewer").str();
  std::unique_ptr<TriggerRoutes> routes_;
};

TEST_F(TriggersHttpTest, ASignedIssueStartsOneAgentOnceHoweverOftenItIsDelivered) {
  const std::string body = GithubPayload("issues_opened.json");
  TestResponse first = Deliver("issues", "issues", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body);
  ASSERT_EQ(first.status, 200) << first.body;
  json::value reply = json::parse(first.body);
  EXPECT_EQ(reply.at("duplicate"), false);
  EXPECT_EQ(reply.at("trigger"), "issues");
  const std::string agent(reply.at("agent").as_string());
  ASSERT_TRUE(WaitIdle(agent));
  json::value snapshot = Snapshot(agent);
  EXPECT_EQ(snapshot.at("title"), "#42 Login form rejects passwords with a space");
  // The prompt, rendered from the payload; the comment of an issues event is missing.
  bool prompted = false;
  for (const json::value& e : AllEvents(agent)) {
    if (Kind(e) == "user.message") {
      EXPECT_EQ(e.at("payload").at("text"),
                "Issue #42 (bug): Login form rejects passwords with a space\n\nSteps: type `pass "
                "word` in the password field and press Enter.\r\nExpected: signed in. Actual: "
                "\"invalid password\".\n\n");
      prompted = true;
    }
    if (Kind(e) == "automation.fired") {
      EXPECT_EQ(e.at("payload").at("key"), "72d3162e-cc78-11e3-81ab-4c9367dc0958");
      EXPECT_EQ(e.at("payload").at("event"), "issues");
      EXPECT_EQ(e.at("payload").at("missingFields"), json::array{"comment.body"});
    }
  }
  EXPECT_TRUE(prompted);
  // Redelivered (GitHub's "Redeliver", or a sender's retry): the same agent, nothing new.
  for (int i = 0; i < 3; ++i) {
    TestResponse again = Deliver("issues", "issues", "72d3162e-cc78-11e3-81ab-4c9367dc0958", body);
    ASSERT_EQ(again.status, 200) << again.body;
    EXPECT_EQ(json::parse(again.body).at("agent"), json::value(agent));
    EXPECT_EQ(json::parse(again.body).at("duplicate"), true);
  }
  EXPECT_EQ(Count(agent, "automation.fired"), 1u);
  EXPECT_EQ(Count(agent, "user.message"), 1u);
  EXPECT_EQ(Count(agent, "turn.started"), 1u);
  // Another delivery is another agent.
  TestResponse comment = Deliver("issues", "issue_comment", "8a1c0f20-cc79-11e3-8a55-0e1f27b4c2a1",
                                 GithubPayload("issue_comment_created.json"));
  ASSERT_EQ(comment.status, 200) << comment.body;
  EXPECT_NE(json::parse(comment.body).at("agent"), json::value(agent));
  EXPECT_EQ(json::parse(comment.body).at("missingFields"), json::array{});
}

TEST_F(TriggersHttpTest, APullRequestPromptsTheNamedAgent) {
  const std::string body = GithubPayload("pull_request_opened.json");
  TestResponse missing = Deliver("reviews", "pull_request", "d1", body);
  EXPECT_EQ(missing.status, 404) << missing.body;  // the agent does not exist yet
  Call("POST", "/v1/agents",
       R"({"provider":"scripted","cwd":"/tmp","clientRequestId":"reviewer"})");
  TestResponse posted = Deliver("reviews", "pull_request", "d2", body);
  ASSERT_EQ(posted.status, 200) << posted.body;
  json::value reply = json::parse(posted.body);
  EXPECT_EQ(reply.at("agent"), json::value(reviewer_));
  EXPECT_EQ(reply.at("missingFields"), json::array{"pull_request.milestone.title"});
  ASSERT_TRUE(WaitIdle(reviewer_));
  // A second pull request while the first is answered: its own turn, queued or run.
  ASSERT_EQ(Deliver("reviews", "pull_request", "d3", body).status, 200);
  ASSERT_TRUE(WaitIdle(reviewer_));
  EXPECT_EQ(Count(reviewer_, "user.message"), 2u);
  EXPECT_EQ(Count(reviewer_, "automation.fired"), 2u);
  for (const json::value& e : AllEvents(reviewer_)) {
    if (Kind(e) == "user.message") {
      EXPECT_EQ(e.at("payload").at("text"),
                "Review PR #43: Keep spaces in passwords (keep-spaces -> main) ");
    }
  }
}

TEST_F(TriggersHttpTest, ForgedUnsignedOversizedAndIgnoredDeliveriesStartNothing) {
  const std::string body = GithubPayload("issues_opened.json");
  std::string tampered = body;
  tampered.replace(tampered.find("Login form"), 10, "Logout");
  const std::string signature = "sha256=" + consumers::HmacSha256Hex(kTriggerSecret, body);
  EXPECT_EQ(Deliver("issues", "issues", "f1", tampered, signature).status, 401);
  EXPECT_EQ(Deliver("issues", "issues", "f2", body, "sha256=" + std::string(64, '0')).status, 401);
  EXPECT_EQ(Deliver("issues", "issues", "f3", body, "sha1=abc").status, 401);
  EXPECT_EQ(Deliver("issues", "issues", "f4", body,
                    "sha256=" + consumers::HmacSha256Hex("wrong-secret-value", body))
                .status,
            401);
  // Over the 1 MiB a request body may have: refused by the transport.
  std::string big =
      R"({"issue":{"number":1,"title":")" + std::string(std::size_t{1} << 20, 'x') + R"("}})";
  EXPECT_EQ(Deliver("issues", "issues", "f5", big).status, 413);
  // No delivery id; not JSON; an unknown trigger.
  EXPECT_EQ(Deliver("issues", "issues", "", body).status, 400);
  EXPECT_EQ(Deliver("issues", "issues", "f6", "{not json").status, 400);
  EXPECT_EQ(Deliver("nope", "issues", "f7", body).status, 404);
  // GitHub's ping when the hook is made: answered, ignored.
  TestResponse ping = Deliver("issues", "ping", "f8", R"({"zen":"Keep it logically awesome."})");
  ASSERT_EQ(ping.status, 200) << ping.body;
  EXPECT_EQ(json::parse(ping.body).at("ignored"), true);
  EXPECT_EQ(Call("GET", "/v1/agents").at("agents").as_array().size(), 0u);
}

// Without a signature the request needs a credential; on loopback without --token that is the
// owner, with Idempotency-Key as the delivery id.
TEST_F(TriggersHttpTest, TheOwnerPostsWithAnIdempotencyKey) {
  const std::string body = GithubPayload("issues_opened.json");
  std::map<std::string, std::string> headers{{"content-type", "application/json"},
                                             {"x-github-event", "issues"},
                                             {"idempotency-key", "owner-1"}};
  TestResponse posted = HttpCall(port_, "POST", "/v1/triggers/issues", body, headers);
  ASSERT_EQ(posted.status, 200) << posted.body;
  TestResponse again = HttpCall(port_, "POST", "/v1/triggers/issues", body, headers);
  EXPECT_EQ(json::parse(again.body).at("agent"), json::parse(posted.body).at("agent"));
  EXPECT_EQ(json::parse(again.body).at("clientMessageId"), "trigger:issues:owner-1");
}

TEST(Triggers, TheFileIsCheckedWhole) {
  const auto refused = [](const std::string& text) {
    auto parsed = ParseTriggers(text, NoSecretFiles);
    EXPECT_FALSE(parsed.ok()) << text;
    return parsed.ok() ? std::string() : parsed.status().message();
  };
  EXPECT_NE(refused("[]").find("object"), std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a b","agent":"s","prompt":"p"}]})").find("id"),
            std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a","prompt":"p"}]})").find("one of them"),
            std::string::npos);
  EXPECT_NE(
      refused(
          R"({"triggers":[{"id":"a","agent":"s","template":{"provider":"x","cwd":"/"},"prompt":"p"}]})")
          .find("one of them"),
      std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a","agent":"s","prompt":"{{x"}]})").find("not closed"),
            std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a","agent":"s","prompt":"{{x | shell}}"}]})")
                .find("not a path"),
            std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a","agent":"s","prompt":"p","secret":"short"}]})")
                .find("16 bytes"),
            std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a","agent":"s","prompt":"p","secretFile":"/x"}]})")
                .find("no file /x"),
            std::string::npos);
  EXPECT_NE(
      refused(
          R"({"triggers":[{"id":"a","agent":"s","prompt":"p"},{"id":"a","agent":"s","prompt":"p"}]})")
          .find("second"),
      std::string::npos);
  EXPECT_NE(refused(R"({"triggers":[{"id":"a","agent":"s","prompt":"p","run":"rm -rf /"}]})")
                .find("unknown member \"run\""),
            std::string::npos);
  auto with_file = ParseTriggers(
      R"({"triggers":[{"id":"a","agent":"s","prompt":"p","secretFile":"/k"}]})",
      [](const std::string&) -> Result<std::string> { return std::string("0123456789abcdef\n"); });
  ASSERT_TRUE(with_file.ok()) << with_file.status().ToString();
  EXPECT_EQ((*with_file)[0].secret, "0123456789abcdef");
}

TEST(Triggers, TemplatesRenderValuesAndNameWhatIsMissing) {
  const json::value payload = json::parse(
      R"({"a":{"b":[{"c":"x"},{"c":7}]},"t":true,"n":null,"o":{"k":[1,2]},"s":"{{a.b.0.c}}"})");
  Rendered r = RenderTemplate(
      "{{a.b.0.c}}/{{ a.b.1.c }}/{{t}}/{{n}}/{{o}}/{{s}}/{{nope.x}}/{{a.b.9}}", payload);
  EXPECT_EQ(r.text,
            "x/7/true/null/{\"k\":[1,2]}/{{a.b.0.c}}//");  // a value is never rendered again
  EXPECT_EQ(r.missing, (std::vector<std::string>{"nope.x", "a.b.9"}));
  EXPECT_FALSE(r.truncated);
  const json::value big = json::object{{"v", std::string(kMaxValueBytes + 10, 'v')}};
  Rendered cut = RenderTemplate("{{v}}", big);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.text.size(), kMaxValueBytes);
  std::string many;
  for (std::size_t i = 0; i < 6; ++i) many += "{{v}}";
  EXPECT_EQ(RenderTemplate(many, big).text.size(), kMaxRenderedBytes);
  std::string too_many;
  for (std::size_t i = 0; i <= kMaxPlaceholders; ++i) too_many += "{{x}}";
  EXPECT_FALSE(CheckTemplate(too_many).ok());
}

TEST(Triggers, SignaturesAndDeliveryIds) {
  const std::string body = R"({"zen":"x"})";
  const std::string good = "sha256=" + consumers::HmacSha256Hex(kTriggerSecret, body);
  EXPECT_TRUE(SignatureMatches(kTriggerSecret, body, good));
  std::string upper = good;
  for (std::size_t i = 7; i < upper.size(); ++i)
    upper[i] = static_cast<char>(std::toupper(upper[i]));
  EXPECT_TRUE(SignatureMatches(kTriggerSecret, body, upper));
  EXPECT_FALSE(SignatureMatches(kTriggerSecret, body + " ", good));
  EXPECT_FALSE(SignatureMatches(kTriggerSecret, body, good.substr(0, good.size() - 1)));
  EXPECT_EQ(*DeliveryId("gh", "key"), "gh");
  EXPECT_EQ(*DeliveryId("", "key"), "key");
  EXPECT_FALSE(DeliveryId("", "").ok());
  EXPECT_FALSE(DeliveryId(std::string(kMaxDeliveryIdBytes + 1, 'd'), "").ok());
  EXPECT_FALSE(DeliveryId("a b", "").ok());
  EXPECT_FALSE(DeliveryId("a\nb", "").ok());
}

}  // namespace
}  // namespace agentstream::server::testing

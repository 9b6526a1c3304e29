// The routes of ApiRouter (api_router.cc) over real sockets: agents, messages (idempotent by
// clientMessageId; queue, interrupt and steer while a turn runs), timeline pages, the catch-up
// reads of the events endpoint, /healthz, /metrics, the OpenAPI document, unknown routes and
// error bodies.
#include <boost/json/parse.hpp>
#include <set>

#include "core/utf8.h"
#include "server/api_router.h"
#include "server/testing/http_fixtures.h"

namespace agentstream::server::testing {
namespace {

TEST_F(HttpTest, CreateSendPageAndReadEvents) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  json::value reply = Call("POST", "/v1/agents/" + id + "/messages",
                           R"({"text":"hello there","clientMessageId":"c1"})");
  EXPECT_EQ(reply.at("accepted"), true);
  EXPECT_EQ(reply.at("outcome"), "accepted");
  EXPECT_TRUE(reply.at("turnId").is_string());
  ASSERT_TRUE(WaitIdle(id));

  json::value page = Call("GET", "/v1/agents/" + id + "/timeline?direction=tail&limit=50");
  const json::array& items = page.at("items").as_array();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].at("kind"), "user_message");
  EXPECT_EQ(items[0].at("text"), "hello there");
  bool assistant = false;
  for (const auto& item : items) assistant |= item.at("kind") == "assistant_message";
  EXPECT_TRUE(assistant);
  EXPECT_EQ(page.at("hasNewer"), false);

  json::array events = AllEvents(id);
  std::vector<std::uint64_t> seqs;
  for (const auto& e : events) seqs.push_back(SeqOf(e));
  ExpectDense(seqs);
  EXPECT_EQ(Kind(events.front()), "session.created");
  json::value snapshot = Snapshot(id);
  EXPECT_EQ(snapshot.at("cursor"), json::value("1:" + std::to_string(seqs.back())));

  TestResponse res = HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=now");
  EXPECT_EQ(res.body, "[]");
  EXPECT_EQ(res.Header("stream-next-offset"), FormatStreamOffset({Epoch(1), Seq(seqs.back())}));
  EXPECT_EQ(res.Header("stream-up-to-date"), "true");

  // Paging before the newest items reaches the first one.
  json::value older = Call("GET", "/v1/agents/" + id + "/timeline?direction=before&cursor=" +
                                      std::string(page.at("endCursor").as_string()) + "&limit=1");
  EXPECT_EQ(older.at("items").as_array().size(), 1u);
  Call("GET", "/v1/agents/" + id + "/timeline?direction=sideways", "", 400);
  Call("GET", "/v1/agents/nope/events?offset=-1", "", 404);
  Call("GET", "/v1/agents/" + id + "/events?offset=9:9:9", "", 400);
}

TEST_F(HttpTest, ResendWithTheSameClientMessageIdIsRecordedOnce) {
  const std::string id = CreateAgent();
  const std::string body = R"({"text":"once","clientMessageId":"same"})";
  json::value first = Call("POST", "/v1/agents/" + id + "/messages", body);
  EXPECT_EQ(first.at("accepted"), true);
  json::value second = Call("POST", "/v1/agents/" + id + "/messages", body);
  EXPECT_EQ(second.at("outcome"), "duplicate");
  EXPECT_EQ(second.at("turnId"), first.at("turnId"));
  ASSERT_TRUE(WaitIdle(id));
  int user_messages = 0;
  for (const auto& e : AllEvents(id)) user_messages += Kind(e) == "user.message";
  EXPECT_EQ(user_messages, 1);
  Call("POST", "/v1/agents/" + id + "/messages", R"({"text":"no id"})", 400);
  Call("POST", "/v1/agents/" + id + "/messages", "{not json", 400);
}

TEST_F(HttpTest, EventsResumeFromOffsetsWithoutGapOrDuplicateWhileStreaming) {
  const std::string id = CreateAgent();
  std::atomic<bool> sent{false};
  std::thread sender([&] {
    for (int i = 0; i < 3; ++i) {
      HttpCall(port_, "POST", "/v1/agents/" + id + "/messages",
               R"({"text":"turn )" + std::to_string(i) + R"(","clientMessageId":"r)" +
                   std::to_string(i) + R"(","whileRunning":"queue"})");
    }
    sent = true;
  });
  std::vector<std::uint64_t> seqs;
  std::string offset = "-1";
  bool idle_seen = false;
  for (int i = 0; i < 5000 && !idle_seen; ++i) {
    TestResponse res = HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=" + offset);
    ASSERT_EQ(res.status, 200);
    for (auto& e : ArrayOf(res.body)) seqs.push_back(SeqOf(e));
    offset = res.Header("stream-next-offset");
    if (sent && res.Header("stream-up-to-date") == "true") {
      json::value s = Snapshot(id);
      Cursor at;
      ASSERT_TRUE(ParseCursor(offset, &at)) << offset;
      idle_seen = s.at("status") == "idle" && s.at("queue").as_array().empty() &&
                  s.at("cursor") == json::value(FormatCursor(at));
    }
  }
  sender.join();
  ASSERT_TRUE(idle_seen);
  ExpectDense(seqs);
  EXPECT_EQ(seqs.size(), AllEvents(id).size());
}

TEST_F(HttpTest, QueueInterruptAndSteerWhileRunning) {
  const std::string id = CreateAgent();
  const std::string messages = "/v1/agents/" + id + "/messages";
  json::value first = Call("POST", messages, R"({"text":"first","clientMessageId":"q1"})");
  ASSERT_EQ(first.at("accepted"), true);
  json::value queued =
      Call("POST", messages, R"({"text":"second","clientMessageId":"q2","whileRunning":"queue"})");
  // The first turn may already have finished on a fast machine; then the second starts at once.
  EXPECT_TRUE(queued.at("outcome") == "queued" || queued.at("outcome") == "accepted");
  ASSERT_TRUE(WaitIdle(id));

  json::value third = Call("POST", messages, R"({"text":"third","clientMessageId":"q3"})");
  ASSERT_EQ(third.at("accepted"), true);
  Call("POST", "/v1/agents/" + id + "/interrupt", "{}");
  json::value steer =
      Call("POST", messages, R"({"text":"fourth","clientMessageId":"q4","whileRunning":"steer"})");
  EXPECT_EQ(steer.at("accepted"), true);
  ASSERT_TRUE(WaitIdle(id));

  std::set<std::string> prompts;
  int terminals = 0, starts = 0;
  for (const auto& e : AllEvents(id)) {
    const std::string kind = Kind(e);
    if (kind == "user.message") prompts.insert(std::string(e.at("payload").at("text").as_string()));
    starts += kind == "turn.started";
    terminals += kind == "turn.completed" || kind == "turn.canceled" || kind == "turn.failed";
  }
  EXPECT_EQ(prompts, (std::set<std::string>{"first", "second", "third", "fourth"}));
  EXPECT_EQ(starts, 4);
  EXPECT_EQ(terminals, 4);
}

TEST_F(HttpTest, HealthMetricsAndUnknownRoutes) {
  EXPECT_EQ(Call("GET", "/healthz").at("status"), "ok");
  TestResponse metrics = HttpCall(port_, "GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("agentstream_connections_open"), std::string::npos);
  EXPECT_NE(metrics.body.find("agentstream_http_requests_total{route=\"/healthz\",status=\"200\"}"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("agentstream_log_events_total"), std::string::npos);
  json::value error = Call("GET", "/v2/nothing", "", 404);
  EXPECT_EQ(error.at("error").at("code"), "not_found");
  // A body over the limit is refused before it is parsed; the server drains the rest before
  // closing, so the client reads the 413 even while it was still writing.
  TestResponse big = HttpCall(port_, "POST", "/v1/agents", std::string(2 << 20, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(Call("GET", "/v1/agents", "", 200).at("agents").as_array().size(), 0u);
}

// The daemon serves its own API description, the JSON form of docs/openapi.yaml.
TEST_F(HttpTest, ServesItsOpenApiDocument) {
  json::value document = Call("GET", "/v1/openapi.json");
  EXPECT_EQ(document.at("openapi"), "3.1.0");
  const json::object& paths = document.at("paths").as_object();
  EXPECT_TRUE(paths.contains("/v1/agents"));
  EXPECT_TRUE(paths.contains("/v1/agents/{id}/events"));
  EXPECT_TRUE(paths.contains("/v1/openapi.json"));
  EXPECT_NE(HttpCall(port_, "GET", "/metrics").body.find("route=\"/v1/openapi.json\""),
            std::string::npos);
}

// A 404 quoting a client's bytes (the session id of the path) is valid UTF-8 JSON.
TEST_F(HttpTest, ErrorBodiesAreValidUtf8WhateverThePathHolds) {
  const TestResponse res = HttpCall(port_, "GET", "/v1/agents/%ff/events");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(res.body.find('\xff'), std::string::npos);
  const json::value body = ParseOrNull(res.body);  // Boost.JSON refuses ill-formed UTF-8
  ASSERT_TRUE(body.is_object()) << res.body;
  EXPECT_EQ(body.at("error").at("code"), "not_found");
  const TestResponse origin =
      HttpCall(port_, "GET", "/v1/agents", "", {{"Origin", "http://\"x\xfe"}});
  EXPECT_EQ(origin.status, 403);
  EXPECT_TRUE(ParseOrNull(origin.body).is_object()) << origin.body;
}

// The message of an error answer.
std::string MessageOf(const TestResponse& res) {
  const json::value body = ParseOrNull(res.body);
  return body.is_object() ? std::string(body.at("error").at("message").as_string()) : res.body;
}

TEST_F(HttpTest, ABooleanQueryValueOtherThanTrueFalseOneOrZeroIsRefused) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  for (const char* value : {"TRUE", "True", "yes", "on", "", "2"}) {
    const TestResponse res =
        HttpCall(port_, "DELETE", "/v1/agents/" + id + "?removeWorktree=" + value);
    EXPECT_EQ(res.status, 400) << value << ": " << res.body;
    EXPECT_EQ(MessageOf(res),
              "removeWorktree must be true, false, 1 or 0, got \"" + std::string(value) + "\"");
  }
  EXPECT_EQ(HttpCall(port_, "DELETE", "/v1/agents/" + id + "?force=yes").status, 400);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents?closed=Yes").status, 400);
  // Nothing was closed; a daemon without worktrees refuses to remove one rather than only close.
  EXPECT_EQ(Snapshot(id).at("closed"), false);
  EXPECT_EQ(HttpCall(port_, "DELETE", "/v1/agents/" + id + "?removeWorktree=1").status, 400);
  EXPECT_EQ(Snapshot(id).at("closed"), false);
  Call("DELETE", "/v1/agents/" + id + "?removeWorktree=false&force=0");
  EXPECT_EQ(Snapshot(id).at("closed"), true);
  EXPECT_EQ(Call("GET", "/v1/agents?closed=0").at("agents").as_array().size(), 0u);
  EXPECT_EQ(Call("GET", "/v1/agents?closed=true").at("agents").as_array().size(), 1u);
}

TEST_F(HttpTest, AnUnknownMemberOfARequestBodyIsRefusedByName) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  const std::string agent = "/v1/agents/" + id;
  const std::string cursor(Snapshot(id).at("cursor").as_string());
  struct Case {
    std::string target, body, message;
  };
  const Case cases[] = {
      {"/v1/agents", R"({"provider":"scripted","cwd":"/tmp","worktre":true})",
       R"(unknown field "worktre" in the agent config (known: provider, cwd, model, mode, )"
       R"(title, clientRequestId, worktree))"},
      {"/v1/agents", R"({"provider":"scripted","cwd":"/tmp","worktree":{"brnch":"x"}})",
       R"(unknown field "brnch" in worktree (known: branch, base))"},
      {agent + "/messages", R"({"text":"hi","clientMessageId":"c1","whileRuning":"steer"})",
       R"(unknown field "whileRuning" in the message (known: text, clientMessageId, )"
       R"(attachments, whileRunning))"},
      {agent + "/messages",
       R"({"text":"hi","clientMessageId":"c2","attachments":[{"kind":"image","mimeType":)"
       R"("image/png","date":"x"}]})",
       R"(unknown field "date" in an attachment (known: kind, mimeType, name, uri, data))"},
      {agent + "/permissions/req_1", R"({"decision":"allow","optionID":"o"})",
       R"(unknown field "optionID" in the permission reply (known: decision, optionId, message))"},
      {agent + "/mode", R"({"mode":"plan","model":"x"})",
       R"(unknown field "model" in the body (known: mode))"},
      {agent + "/title", R"({"title":"t","name":"n"})",
       R"(unknown field "name" in the body (known: title))"},
      {agent + "/fork", R"({"cursor":")" + cursor + R"(","at":"1:1"})",
       R"(unknown field "at" in the body (known: cursor))"},
      {agent + "/rewind", R"({"cursor":")" + cursor + R"(","dryRun":true})",
       R"(unknown field "dryRun" in the body (known: cursor))"},
  };
  for (const Case& c : cases) {
    const TestResponse res = HttpCall(port_, "POST", c.target, c.body);
    EXPECT_EQ(res.status, 400) << c.target << " " << c.body << ": " << res.body;
    EXPECT_EQ(MessageOf(res), c.message) << c.target << " " << c.body;
  }
  // Nothing happened: one agent, no prompt, the same epoch.
  EXPECT_EQ(Call("GET", "/v1/agents?closed=1").at("agents").as_array().size(), 1u);
  EXPECT_EQ(Snapshot(id).at("cursor"), json::value(cursor));
}

TEST_F(HttpTest, AnEventsOffsetOfALaterEpochIsPastTheTail) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  const std::string events = "/v1/agents/" + id + "/events?offset=";
  for (const std::string offset : {"2:0", "0000000000000002_0000000000000000", "9:1"}) {
    const TestResponse res = HttpCall(port_, "GET", events + offset);
    EXPECT_EQ(res.status, 400) << offset << ": " << res.body;
    EXPECT_NE(MessageOf(res).find("past the tail"), std::string::npos) << res.body;
    EXPECT_EQ(res.Header("stream-reset"), "") << offset;
  }
  EXPECT_EQ(HttpCall(port_, "GET", events + "2:0&live=long-poll").status, 400);
  EXPECT_EQ(HttpCall(port_, "GET", events + "1:0&live=").status, 400);
  EXPECT_EQ(HttpCall(port_, "GET", events + "1:0&live=bogus").status, 400);
  EXPECT_EQ(HttpCall(port_, "GET", events + "1:0").status, 200);
}

TEST(ApiRouterErrors, BodiesAreValidUtf8) {
  const HttpResponse not_found =
      ErrorResponse(Error(ErrorCode::kNotFound, std::string("no session \xff\xfe")));
  EXPECT_TRUE(IsValidUtf8(not_found.body)) << not_found.body;
  EXPECT_NE(not_found.body.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
  const HttpResponse forbidden =
      CodedErrorResponse(403, "forbidden", "origin \"\xc3\x28\\ is not allowed");
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_TRUE(IsValidUtf8(forbidden.body)) << forbidden.body;
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(forbidden.body, ec);
  ASSERT_FALSE(ec) << forbidden.body;
  EXPECT_EQ(parsed.at("error").at("code"), "forbidden");
}

}  // namespace
}  // namespace agentstream::server::testing

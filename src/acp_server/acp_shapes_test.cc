// Bad input answered by the right JSON-RPC error, the initialize result, prompts, turn ends and
// session/list paging.
#include "acp_server/acp_shapes.h"
#include "jsonrpc/stdio_channel.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

namespace agentstream::acp_server {
namespace {

namespace json = boost::json;

process::Frame Line(std::string text) { return {process::Frame::Kind::kLine, std::move(text), 0}; }

// The error a line is answered with: {id, code}.
using jsonrpc::Inbound;
using jsonrpc::ReadLine;

std::pair<json::value, std::int64_t> ErrorOf(const Inbound& in) {
  const json::value v = json::parse(in.error_line);
  return {v.at("id"), v.at("error").at("code").as_int64()};
}

TEST(ReadLine, MalformedJsonIsAParseError) {
  Inbound in = ReadLine(Line("{\"jsonrpc\":\"2.0\",\"id\":1,"));
  EXPECT_FALSE(in.message);
  EXPECT_EQ(ErrorOf(in), std::make_pair(json::value(nullptr), std::int64_t{-32700}));
}

TEST(ReadLine, JsonThatIsNoRequestIsAnInvalidRequestWithItsId) {
  EXPECT_EQ(ErrorOf(ReadLine(Line("[1,2]"))).second, -32600);
  EXPECT_EQ(ErrorOf(ReadLine(Line("42"))).second, -32600);
  // No "jsonrpc": "2.0": refused, answered with the id it had.
  EXPECT_EQ(ErrorOf(ReadLine(Line(R"({"id":7,"method":"initialize"})"))),
            std::make_pair(json::value(7), std::int64_t{-32600}));
  EXPECT_EQ(ErrorOf(ReadLine(Line(R"({"jsonrpc":"2.0","id":"a","method":3})"))),
            std::make_pair(json::value("a"), std::int64_t{-32600}));
  // An id that is neither a string nor a number.
  EXPECT_EQ(ErrorOf(ReadLine(Line(R"({"jsonrpc":"2.0","id":{},"method":"x"})"))),
            std::make_pair(json::value(nullptr), std::int64_t{-32600}));
}

TEST(ReadLine, AnOversizeLineIsRefusedNamingTheBound) {
  Inbound in = ReadLine({process::Frame::Kind::kOversize, "{\"jsonrpc\"", 1000});
  ASSERT_FALSE(in.message);
  EXPECT_EQ(ErrorOf(in).second, -32600);
  EXPECT_NE(in.error_line.find("8388608"), std::string::npos);
}

TEST(ReadLine, BlankLinesAreIgnoredAndMessagesRead) {
  Inbound blank = ReadLine(Line("  \r"));
  EXPECT_FALSE(blank.message);
  EXPECT_TRUE(blank.error_line.empty());
  Inbound ok = ReadLine(Line(R"({"jsonrpc":"2.0","id":1,"method":"session/list","params":{}})"));
  ASSERT_TRUE(ok.message);
  EXPECT_EQ(ok.message->kind, jsonrpc::RpcMessage::Kind::kRequest);
  EXPECT_EQ(ok.message->method, "session/list");
  Inbound note = ReadLine(Line(R"({"jsonrpc":"2.0","method":"session/cancel","params":{}})"));
  ASSERT_TRUE(note.message);
  EXPECT_EQ(note.message->kind, jsonrpc::RpcMessage::Kind::kNotification);
}

TEST(Initialize, AdvertisesWhatIsSupported) {
  const json::object r = InitializeResult("1.2.3");
  EXPECT_EQ(r.at("protocolVersion"), 1);
  const json::object& caps = r.at("agentCapabilities").as_object();
  EXPECT_EQ(caps.at("loadSession"), true);
  EXPECT_EQ(caps.at("promptCapabilities").at("image"), true);
  EXPECT_EQ(caps.at("promptCapabilities").at("audio"), false);
  const json::object& session = caps.at("sessionCapabilities").as_object();
  for (const char* name : {"list", "resume", "close"}) EXPECT_TRUE(session.at(name).is_object());
  EXPECT_EQ(r.at("agentInfo").at("version"), "1.2.3");
}

TEST(ReadPrompt, JoinsTextAndKeepsImages) {
  const json::value prompt = json::parse(R"([
    {"type":"text","text":"fix it"},
    {"type":"resource","resource":{"uri":"file:///a.c","text":"int x;"}},
    {"type":"resource_link","uri":"file:///b.c","name":"b.c"},
    {"type":"image","mimeType":"image/png","data":"iVBO"}])");
  auto s = ReadPrompt(prompt);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->text,
            "fix it\n\n<resource uri=\"file:///a.c\">\nint x;\n</resource>\n\n[b.c](file:///b.c)");
  ASSERT_EQ(s->attachments.size(), 1u);
  EXPECT_EQ(s->attachments[0].kind, "image");
  EXPECT_EQ(s->attachments[0].data.value_or(""), "iVBO");
  EXPECT_FALSE(
      ReadPrompt(json::parse(R"([{"type":"audio","data":"x","mimeType":"audio/wav"}])")).ok());
  EXPECT_FALSE(ReadPrompt(json::parse("[]")).ok());
  EXPECT_FALSE(ReadPrompt(json::parse(R"([{"type":"text","text":""}])")).ok());
  EXPECT_FALSE(ReadPrompt(json::parse(R"("hi")")).ok());
}

TEST(TurnEnds, AnswerThePrompt) {
  auto done = TurnEndOf(TurnCompleted{"tool_use"});
  ASSERT_TRUE(done);
  EXPECT_EQ(done->stop_reason, "end_turn");  // not an ACP stop reason
  EXPECT_EQ(json::parse(PromptAnswerLine(jsonrpc::RpcId(1), *done)).at("result").at("stopReason"),
            "end_turn");
  EXPECT_EQ(TurnEndOf(TurnCompleted{"max_tokens"})->stop_reason, "max_tokens");
  auto canceled = TurnEndOf(TurnCanceled{"interrupted"});
  EXPECT_EQ(
      json::parse(PromptAnswerLine(jsonrpc::RpcId(2), *canceled)).at("result").at("stopReason"),
      "cancelled");
  auto failed = TurnEndOf(TurnFailed{"daemon_restarted", "restarted"});
  const json::value answer = json::parse(PromptAnswerLine(jsonrpc::RpcId(3), *failed));
  EXPECT_EQ(answer.at("error").at("code"), -32603);
  EXPECT_EQ(answer.at("error").at("data").at("code"), "daemon_restarted");
  EXPECT_FALSE(TurnEndOf(TurnStarted{}));
}

api::AgentSnapshot Agent(int i, std::string cwd, bool closed = false) {
  api::AgentSnapshot a;
  a.id = SessionId("ses_" + std::to_string(1000 + i));
  a.cwd = std::move(cwd);
  a.created_ms = 1'700'000'000'000 + (i / 3) * 1000;  // ties, ordered by id
  a.closed = closed;
  return a;
}

TEST(ListPage, PagesNewestFirstWithNoGapNorDuplicate) {
  std::vector<api::AgentSnapshot> agents;
  for (int i = 0; i < 250; ++i) agents.push_back(Agent(i, i % 5 == 0 ? "/other" : "/work"));
  agents.push_back(Agent(999, "/work", true));
  std::set<std::string> seen;
  std::string cursor;
  int pages = 0;
  std::int64_t last_created = INT64_MAX;
  do {
    auto page = ListPage(agents, "/work", cursor, 70);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const json::value& s : page->at("sessions").as_array()) {
      EXPECT_EQ(s.at("cwd"), "/work");
      EXPECT_TRUE(seen.insert(std::string(s.at("sessionId").as_string())).second);
    }
    cursor = page->contains("nextCursor") ? std::string(page->at("nextCursor").as_string()) : "";
    ++pages;
  } while (!cursor.empty());
  EXPECT_EQ(seen.size(), 200u);  // every open session in /work, none twice
  EXPECT_EQ(pages, 3);
  EXPECT_FALSE(seen.contains("ses_1999"));  // closed
  (void)last_created;
  EXPECT_FALSE(ListPage(agents, "", "garbage", 10).ok());
  auto all = ListPage(agents, "", "", 1000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->at("sessions").as_array().size(), 250u);
  EXPECT_EQ(all->at("sessions").at(0).at("updatedAt"), "2023-11-14T22:14:43.000Z");
}

}  // namespace
}  // namespace agentstream::acp_server

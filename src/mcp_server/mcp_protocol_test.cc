#include "mcp_server/mcp_protocol.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "jsonrpc/stdio_channel.h"

namespace agentstream::mcp_server {
namespace {

namespace json = boost::json;

json::object Parse(const std::string& line) { return json::parse(line).as_object(); }

jsonrpc::RpcMessage Msg(std::string_view text) {
  auto m = jsonrpc::ParseRpc(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(McpProtocol, NegotiatesTheVersionTheClientAsksForWhenSpokenElseTheNewest) {
  EXPECT_EQ(NegotiateVersion("2025-06-18"), "2025-06-18");
  EXPECT_EQ(NegotiateVersion("2025-11-25"), "2025-11-25");
  EXPECT_EQ(NegotiateVersion("2099-01-01"), "2025-11-25");
}

TEST(McpProtocol, InitializeThenToolsListAndPing) {
  McpProtocol p("1.2.3");
  Dispatch early = p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})"));
  ASSERT_TRUE(early.reply_line);
  EXPECT_EQ(Parse(*early.reply_line).at("error").at("code"), jsonrpc::kInvalidRequest);

  Dispatch init = p.OnMessage(Msg(
      R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18",
          "capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"));
  ASSERT_TRUE(init.reply_line);
  json::object result = Parse(*init.reply_line).at("result").as_object();
  EXPECT_EQ(result.at("protocolVersion"), "2025-06-18");
  EXPECT_EQ(result.at("serverInfo").at("version"), "1.2.3");
  EXPECT_TRUE(result.at("capabilities").as_object().contains("tools"));

  EXPECT_FALSE(
      p.OnMessage(Msg(R"({"jsonrpc":"2.0","method":"notifications/initialized"})")).reply_line);
  Dispatch ping = p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":"p","method":"ping"})"));
  EXPECT_EQ(Parse(*ping.reply_line).at("result"), json::object{});

  Dispatch list = p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})"));
  const json::object listed = Parse(*list.reply_line);
  const json::array& tools = listed.at("result").at("tools").as_array();
  std::vector<std::string> names;
  for (const json::value& t : tools) {
    names.emplace_back(t.at("name").as_string());
    EXPECT_EQ(t.at("inputSchema").at("type"), "object") << names.back();
    EXPECT_FALSE(t.at("description").as_string().empty()) << names.back();
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "agents_list", "agent_create", "agent_send", "agent_timeline",
                       "agents_search", "agent_last_message", "agent_settings", "agent_interrupt",
                       "agent_git", "permission_answer", "schedule_create", "schedules_list",
                       "schedule_show", "schedule_pause", "schedule_resume", "schedule_delete"}));
}

TEST(McpProtocol, BadRequestsAreJsonRpcErrors) {
  McpProtocol p("1");
  auto code = [&](std::string_view text) {
    Dispatch d = p.OnMessage(Msg(text));
    EXPECT_FALSE(d.tool) << text;
    return d.reply_line ? Parse(*d.reply_line).at("error").at("code").as_int64() : 0;
  };
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"),
            jsonrpc::kInvalidParams);
  p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":1,"method":"initialize",
                      "params":{"protocolVersion":"2025-11-25"}})"));
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":2,"method":"resources/list"})"),
            jsonrpc::kMethodNotFound);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rm_rf"}})"),
            jsonrpc::kInvalidParams);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}})"),
            jsonrpc::kInvalidParams);
  EXPECT_EQ(code(R"({"jsonrpc":"2.0","id":5,"method":"tools/call",
                     "params":{"name":"agents_list","arguments":[1]}})"),
            jsonrpc::kInvalidParams);
  Dispatch ok = p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":6,"method":"tools/call",
                                    "params":{"name":"agents_list"}})"));
  ASSERT_TRUE(ok.tool);
  EXPECT_EQ(ok.tool->name, "agents_list");
  EXPECT_EQ(ok.tool->id, jsonrpc::RpcId(6));
}

TEST(McpProtocol, CancelledNamesTheRequestTheClientGaveUpOn) {
  McpProtocol p("1");
  Dispatch d = p.OnMessage(Msg(R"({"jsonrpc":"2.0","method":"notifications/cancelled",
                                   "params":{"requestId":"7","reason":"user"}})"));
  EXPECT_FALSE(d.reply_line);
  ASSERT_TRUE(d.cancel);
  EXPECT_EQ(*d.cancel, jsonrpc::RpcId::String("7"));
  EXPECT_FALSE(p.OnMessage(Msg(R"({"jsonrpc":"2.0","method":"notifications/cancelled"})")).cancel);
}

TEST(McpProtocol, MalformedAndOversizeLinesAreAnsweredByTheSharedReader) {
  jsonrpc::Inbound garbage =
      jsonrpc::ReadLine(process::Frame{process::Frame::Kind::kLine, "{nope"});
  EXPECT_EQ(Parse(garbage.error_line).at("error").at("code"), jsonrpc::kParseError);
  jsonrpc::Inbound big = jsonrpc::ReadLine(process::Frame{process::Frame::Kind::kOversize, ""});
  EXPECT_NE(Parse(big.error_line).at("error").at("message").as_string().find("8388608"),
            std::string::npos);
}

TEST(McpProtocol, ARequestWithANullIdIsAnInvalidRequest) {
  McpProtocol p("1.2.3", /*stateless=*/true);
  Dispatch d = p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":null,"method":"ping"})"));
  ASSERT_TRUE(d.reply_line);
  EXPECT_EQ(*d.reply_line, R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,)"
                           R"("message":"Invalid Request: an MCP request id is a string or an )"
                           R"(integer"}})");
  EXPECT_FALSE(d.tool);
}

TEST(McpProtocol, IdsBeyondSixtyFourBitsAreEchoedExactly) {
  McpProtocol p("1.2.3", /*stateless=*/true);
  Dispatch ping =
      p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"})"));
  ASSERT_TRUE(ping.reply_line);
  EXPECT_EQ(*ping.reply_line,
            R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}})");
  Dispatch call = p.OnMessage(Msg(R"({"jsonrpc":"2.0","id":-99999999999999999999,)"
                                  R"("method":"tools/call","params":{"name":"agents_list"}})"));
  ASSERT_TRUE(call.tool);
  EXPECT_TRUE(ToolReplyLine(call.tool->id, json::object{})
                  .starts_with(R"({"jsonrpc":"2.0","id":-99999999999999999999,"result":)"));
}

TEST(McpProtocol, ToolRepliesCarryStructuredContentOrAToolError) {
  json::object ok = Parse(ToolReplyLine(jsonrpc::RpcId(7), json::object{{"a", 1}}));
  EXPECT_EQ(ok.at("result").at("structuredContent").at("a"), 1);
  EXPECT_EQ(ok.at("result").at("content").at(0).at("text"), R"({"a":1})");
  json::object bad =
      Parse(ToolReplyLine(jsonrpc::RpcId(8), Error(ErrorCode::kNotFound, "no agent x")));
  EXPECT_EQ(bad.at("result").at("isError"), true);
  EXPECT_EQ(bad.at("result").at("content").at(0).at("text"), "no agent x");
}

}  // namespace
}  // namespace agentstream::mcp_server

#include "jsonrpc/json_rpc.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

namespace agentstream::jsonrpc {
namespace {

namespace json = boost::json;

TEST(JsonRpc, ParsesTheThreeMessageKinds) {
  auto req = ParseRpc(R"({"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{}})");
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->kind, RpcMessage::Kind::kRequest);
  auto note = ParseRpc(R"({"jsonrpc":"2.0","method":"session/update","params":{}})");
  ASSERT_TRUE(note.ok());
  EXPECT_EQ(note->kind, RpcMessage::Kind::kNotification);
  auto err = ParseRpc(R"({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}})");
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->kind, RpcMessage::Kind::kResponse);
  EXPECT_EQ(err->error.value_or(""), "-32603: boom");
  EXPECT_FALSE(ParseRpc("[1,2]").ok());
  EXPECT_FALSE(ParseRpc(R"({"jsonrpc":"2.0"})").ok());
  EXPECT_FALSE(ParseRpc(R"({"jsonrpc":"2.0","id":1,"method":7})").ok());
}

TEST(JsonRpc, TellsTextThatIsNotJsonFromAValueThatIsNoMessage) {
  auto garbage = ParseRpc("not json");
  ASSERT_FALSE(garbage.ok());
  EXPECT_TRUE(garbage.status().message().starts_with("not JSON"));
  auto array = ParseRpc("[1,2]");
  ASSERT_FALSE(array.ok());
  EXPECT_FALSE(array.status().message().starts_with("not JSON"));
}

TEST(JsonRpc, AnInfiniteIdReadsAsNullSoTheReplyIsJson) {
  auto m = ParseRpc(R"({"jsonrpc":"2.0","id":1e999,"method":"x"})");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->kind, RpcMessage::Kind::kNotification);  // a null id is no request id
  const std::string line = ErrorLine(m->id, kInvalidRequest, "no");
  EXPECT_NO_THROW((void)json::parse(line));
}

TEST(JsonRpc, LinesRoundTrip) {
  auto r = ParseRpc(RequestLine(7, "session/prompt", json::object{{"a", 1}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->id, json::value(7));
  EXPECT_EQ(r->method, "session/prompt");
  auto e = ParseRpc(ErrorLine("x", kMethodNotFound, "nope", json::object{{"why", "y"}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->error_code, kMethodNotFound);
  auto ok = ParseRpc(ResultLine(json::value(nullptr), json::object{}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->kind, RpcMessage::Kind::kResponse);
}

}  // namespace
}  // namespace agentstream::jsonrpc

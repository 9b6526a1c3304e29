#include "jsonrpc/json_rpc.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

namespace agentstream::jsonrpc {
namespace {

namespace json = boost::json;

// The answer a server writes to `line`: the fault's error line, or a result echoing the id.
std::string Answer(std::string_view line) {
  RpcRead read = ReadRpc(line, /*strict=*/true);
  if (read.fault) return FaultLine(*read.fault);
  return ResultLine(read.message->id, json::object{});
}

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
  EXPECT_EQ(err->id.int64(), 3);
  EXPECT_FALSE(ParseRpc("[1,2]").ok());
  EXPECT_FALSE(ParseRpc(R"({"jsonrpc":"2.0"})").ok());
  EXPECT_FALSE(ParseRpc(R"({"jsonrpc":"2.0","id":1,"method":7})").ok());
}

TEST(JsonRpc, TellsTextThatIsNotJsonFromAValueThatIsNoMessage) {
  RpcRead garbage = ReadRpc("not json", false);
  ASSERT_TRUE(garbage.fault);
  EXPECT_EQ(garbage.fault->code, kParseError);
  RpcRead array = ReadRpc("[1,2]", false);
  ASSERT_TRUE(array.fault);
  EXPECT_EQ(array.fault->code, kInvalidRequest);
}

TEST(JsonRpc, AParseErrorSaysWhereAndNamesNoLibraryOrSourceFile) {
  for (std::string_view line :
       {R"({"jsonrpc":"2.0","id":1,)", "{\"a\":\"\\u12\"}", "nul", "{} x"}) {
    RpcRead read = ReadRpc(line, true);
    ASSERT_TRUE(read.fault) << line;
    EXPECT_EQ(read.fault->code, kParseError);
    EXPECT_TRUE(read.fault->id.is_null());
    const std::string& message = read.fault->message;
    EXPECT_TRUE(message.starts_with("Parse error: invalid JSON at byte ")) << message;
    for (std::string_view leak : {"boost", ".hpp", ".ipp", "/usr", "line ", "function"})
      EXPECT_EQ(message.find(leak), std::string::npos) << message;
  }
  EXPECT_NE(ReadRpc("{} x", true).fault->message.find("at byte 3"), std::string::npos);
}

TEST(JsonRpc, IdsAreEchoedExactlyAsReceived) {
  const std::vector<std::string> ids = {
      "123456789012345678901234567890",  // beyond 64 bits: a double would change it
      "-98765432109876543210987654321",
      "18446744073709551615",
      "0",
      "-0",
      R"("abc")",
      R"("\u00e9\n\"x\"")",  // escapes kept as written
      R"("é")",
      "null",
  };
  for (const std::string& id : ids) {
    const std::string line = R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})";
    RpcRead read = ReadRpc(line, true);
    ASSERT_TRUE(read.message) << id << ": " << read.fault->message;
    EXPECT_EQ(read.message->kind, RpcMessage::Kind::kRequest) << id;  // a null id too
    EXPECT_EQ(read.message->id.json(), id);
    EXPECT_EQ(Answer(line), R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{}})");
    EXPECT_NO_THROW((void)json::parse(Answer(line)));
  }
  // White space around the id and other members before it do not matter.
  RpcRead spaced =
      ReadRpc(R"( { "method" : "x", "jsonrpc":"2.0", "id" :  7 , "params":[1]} )", true);
  ASSERT_TRUE(spaced.message);
  EXPECT_EQ(spaced.message->id.json(), "7");
}

TEST(JsonRpc, AnIdThatIsNoStringIntegerOrNullIsAnInvalidRequestAnsweredWithANullId) {
  for (std::string_view id :
       {"1.5", "1e400", "1e2", "1.0", "-1e-5", "true", "false", "{}", "[]", R"({"id":1})", "[1]"}) {
    const std::string line = R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":"x"})";
    RpcRead read = ReadRpc(line, true);
    ASSERT_TRUE(read.fault) << id;
    EXPECT_EQ(read.fault->code, kInvalidRequest) << id;
    EXPECT_TRUE(read.fault->id.is_null()) << id;
    EXPECT_TRUE(Answer(line).starts_with(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,)"))
        << Answer(line);
    EXPECT_FALSE(ParseRpc(line).ok());
  }
}

TEST(JsonRpc, AnIdWithoutMethodResultOrErrorIsAnInvalidRequestWithItsId) {
  for (bool strict : {true, false}) {
    RpcRead read = ReadRpc(R"({"jsonrpc":"2.0","id":2})", strict);
    ASSERT_TRUE(read.fault);
    EXPECT_EQ(read.fault->code, kInvalidRequest);
    EXPECT_EQ(read.fault->id.json(), "2");
    read = ReadRpc(R"({"jsonrpc":"2.0","id":"r","error":null})", strict);
    ASSERT_TRUE(read.fault);
    EXPECT_EQ(read.fault->id.json(), R"("r")");
  }
  EXPECT_TRUE(Answer(R"({"jsonrpc":"2.0","id":123456789012345678901234567890})")
                  .starts_with(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,)"
                               R"("error":{"code":-32600,)"));
  RpcRead result = ReadRpc(R"({"jsonrpc":"2.0","id":2,"result":null})", true);
  ASSERT_TRUE(result.message);
  EXPECT_EQ(result.message->kind, RpcMessage::Kind::kResponse);
}

TEST(JsonRpc, StrictReadingWantsVersionTwoAndStructuredParams) {
  RpcRead old = ReadRpc(R"({"id":"a","method":"x"})", true);
  ASSERT_TRUE(old.fault);
  EXPECT_EQ(old.fault->id.json(), R"("a")");
  EXPECT_TRUE(ReadRpc(R"({"id":"a","method":"x"})", false).message);  // codex omits it
  RpcRead scalar = ReadRpc(R"({"jsonrpc":"2.0","id":4,"method":"x","params":3})", true);
  ASSERT_TRUE(scalar.fault);
  EXPECT_EQ(scalar.fault->code, kInvalidRequest);
  EXPECT_EQ(scalar.fault->id.json(), "4");
}

TEST(JsonRpc, ARepeatedIdMemberReadsAsTheLastOneLikeTheRestOfTheObject) {
  RpcRead read = ReadRpc(R"({"jsonrpc":"2.0","id":1,"method":"x","id":"two"})", true);
  ASSERT_TRUE(read.message);
  EXPECT_EQ(read.message->id.json(), R"("two")");
  RpcRead escaped = ReadRpc(R"({"jsonrpc":"2.0","\u0069d":9,"method":"x"})", true);
  ASSERT_TRUE(escaped.message);
  EXPECT_EQ(escaped.message->id.json(), "9");
}

TEST(JsonRpc, IdsCompareAsJsonValues) {
  EXPECT_EQ(*RpcId::FromJson(R"("\u0061")"), RpcId::String("a"));
  EXPECT_EQ(*RpcId::FromJson("12"), RpcId(12));
  EXPECT_FALSE(*RpcId::FromJson("12") == RpcId::String("12"));
  EXPECT_EQ(RpcId::FromValue(json::value(7))->json(), "7");
  EXPECT_FALSE(RpcId::FromValue(json::value(1.5)));
  EXPECT_FALSE(RpcId::FromJson("12 "));
  EXPECT_FALSE(RpcId::FromJson("012"));
  EXPECT_EQ(RpcId::FromJson("123456789012345678901234567890")->int64(), std::nullopt);
  EXPECT_EQ(RpcId::String("x\"y").string(), "x\"y");
}

TEST(JsonRpc, LinesRoundTrip) {
  auto r = ParseRpc(RequestLine(7, "session/prompt", json::object{{"a", 1}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->id, RpcId(7));
  EXPECT_EQ(r->method, "session/prompt");
  auto e =
      ParseRpc(ErrorLine(RpcId::String("x"), kMethodNotFound, "nope", json::object{{"why", "y"}}));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->error_code, kMethodNotFound);
  auto ok = ParseRpc(ResultLine(RpcId(), json::object{}));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->kind, RpcMessage::Kind::kResponse);
  EXPECT_EQ(LineWithId(RpcId::String("q"), json::object{{"result", 1}}),
            R"({"id":"q","result":1})");
  EXPECT_EQ(LineWithId(RpcId(3), json::object{}), R"({"id":3})");
}

}  // namespace
}  // namespace agentstream::jsonrpc

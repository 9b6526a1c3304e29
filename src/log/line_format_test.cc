#include "log/line_format.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <vector>

namespace agentstream::log {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

std::string Body(Format format, std::vector<Field> fields, std::vector<Field> scope = {},
                 std::vector<std::string> secrets = {}) {
  return FormatBody(format, "process.exited", scope, fields, secrets);
}

TEST(LineFormatTest, TextWritesPlainValuesBareAndQuotesTheRest) {
  EXPECT_EQ(Body(Format::kText, {{"agent", "ses_1a"},
                                 {"pid", 123},
                                 {"code", -1},
                                 {"ok", false},
                                 {"program", "/usr/bin/x-1.2"},
                                 {"tail", "boom: it \"failed\"\n"},
                                 {"empty", ""},
                                 {"eq", "a=b"},
                                 {"word", "déjà"}}),
            "process.exited agent=ses_1a pid=123 code=-1 ok=false program=/usr/bin/x-1.2 "
            "tail=\"boom: it \\\"failed\\\"\\n\" empty=\"\" eq=\"a=b\" word=\"déjà\"");
}

TEST(LineFormatTest, JsonEscapesEveryValueAsAJsonString) {
  const std::string body = Body(Format::kJson, {{"pid", std::uint64_t{18446744073709551615u}},
                                                {"signal", "SIGKILL"},
                                                {"tail", "a\"b\\c\n\x01"},
                                                {"fatal", true}});
  EXPECT_EQ(body,
            "\"event\":\"process.exited\",\"pid\":18446744073709551615,\"signal\":\"SIGKILL\","
            "\"tail\":\"a\\\"b\\\\c\\n\\u0001\",\"fatal\":true");
  const boost::json::value parsed = boost::json::parse("{" + body + "}");
  EXPECT_EQ(parsed.at("tail").as_string(), "a\"b\\c\n\x01");
}

TEST(LineFormatTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::string body = Body(Format::kJson, {{"tail", "ok\xff"}});
  EXPECT_EQ(body, "\"event\":\"process.exited\",\"tail\":\"ok\xEF\xBF\xBD\"");
}

TEST(LineFormatTest, LongValuesAreCutAtACharacterBoundary) {
  std::string long_text(kMaxValueBytes - 1, 'x');
  long_text += "é and more";  // the two-byte character straddles the bound
  const boost::json::value parsed =
      boost::json::parse("{" + Body(Format::kJson, {{"message", long_text}}) + "}");
  const std::string cut(parsed.at("message").as_string());
  EXPECT_EQ(cut, std::string(kMaxValueBytes - 1, 'x') + "...");

  const std::string fits(kMaxValueBytes, 'y');
  EXPECT_EQ(Body(Format::kText, {{"message", fits}}), "process.exited message=" + fits);
}

TEST(LineFormatTest, SecretsAreMaskedWhereverTheyAppear) {
  EXPECT_EQ(Body(Format::kText, {{"error", "bad token s3cr3t (s3cr3t)"}, {"url", "pg://u:pw@h"}},
                 {}, {"s3cr3t", "pw"}),
            "process.exited error=\"bad token *** (***)\" url=\"pg://u:***@h\"");
}

TEST(LineFormatTest, ScopeFieldsComeFirstAndALineFieldReplacesOne) {
  EXPECT_EQ(Body(Format::kText, {{"pid", 7}, {"agent", "ses_b"}},
                 {{"agent", "ses_a"}, {"provider", "acp:x"}}),
            "process.exited agent=ses_b provider=acp:x pid=7");
}

TEST(LineFormatTest, LinesCarryUtcMillisecondsAndTheLevel) {
  // 2026-12-01T17:00:00.123Z
  const system_clock::time_point at{milliseconds(1796144400123)};
  EXPECT_EQ(FormatLine(Format::kText, at, Level::kWarn, "daemon.stopping signal=SIGTERM"),
            "2026-12-01T17:00:00.123Z WARN daemon.stopping signal=SIGTERM\n");
  EXPECT_EQ(FormatLine(Format::kJson, at, Level::kInfo, "\"event\":\"daemon.stopping\""),
            "{\"ts\":\"2026-12-01T17:00:00.123Z\",\"level\":\"info\",\"event\":\"daemon.stopping\"}"
            "\n");
}

}  // namespace
}  // namespace agentstream::log

#include "net/sse_writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/sse_parser.h"

namespace agentstream::net {
namespace {

std::vector<SseEvent> Parse(std::string_view bytes) {
  SseParser parser;
  std::vector<SseEvent> events;
  EXPECT_TRUE(parser.Feed(bytes, events).ok());
  return events;
}

TEST(SseWriterTest, WritesTheBytesDurableStreamsClientsMatch) {
  EXPECT_EQ(FormatSseEvent("control", R"({"upToDate":true})"),
            "event: control\ndata:{\"upToDate\":true}\n\n");
  EXPECT_EQ(FormatSseEvent("data", "a\nb"), "event: data\ndata:a\ndata:b\n\n");
  EXPECT_EQ(FormatSseEvent("data", ""), "event: data\ndata:\n\n");
}

TEST(SseWriterTest, ThePayloadComesBackThroughTheParserWithItsLineBreaksAsLf) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1,2]", "[1,2]"},
      {"one\r\ntwo\rthree\nfour", "one\ntwo\nthree\nfour"},
      {" leading space", " leading space"},
      {"  two\n three", "  two\n three"},
      {"\n\n", "\n\n"},
      {"trailing\r\n", "trailing\n"},
      {":not a comment", ":not a comment"},
  };
  for (const auto& [payload, want] : cases) {
    const auto events = Parse(FormatSseEvent("data", payload));
    ASSERT_EQ(events.size(), 1u) << payload;
    EXPECT_EQ(events[0].event, "data");
    EXPECT_EQ(events[0].data, want) << payload;
  }
}

TEST(SseWriterTest, TheHeadAndEndAroundAOneLinePayloadAreTheSameEvent) {
  const std::string payload = R"([{"seq":1}])";
  EXPECT_EQ(SseEventHead("data") + payload + std::string(kSseEventEnd),
            FormatSseEvent("data", payload));
  std::string two;
  AppendSseEvent("data", payload, &two);
  two += kSseKeepAlive;
  AppendSseEvent("control", "{}", &two);
  const auto events = Parse(two);
  ASSERT_EQ(events.size(), 2u) << "the keep-alive is a comment";
  EXPECT_EQ(events[1].event, "control");
}

}  // namespace
}  // namespace agentstream::net

#include "net/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentstream::net {
namespace {

std::vector<SseEvent> ParseAll(std::string_view bytes, SseLimits limits = {}) {
  SseParser parser(limits);
  std::vector<SseEvent> out;
  EXPECT_TRUE(parser.Feed(bytes, out).ok());
  return out;
}

// Feeds `bytes` one byte at a time.
std::vector<SseEvent> ParseBytewise(std::string_view bytes) {
  SseParser parser;
  std::vector<SseEvent> out;
  for (char c : bytes) EXPECT_TRUE(parser.Feed(std::string_view(&c, 1), out).ok());
  return out;
}

constexpr std::string_view kStream =
    "event: data\n"
    "data: [{\"seq\":1}]\n"
    "\n"
    ": keep-alive\n"
    "\n"
    "event: control\n"
    "data: {\"streamNextOffset\":\"1:1\",\"upToDate\":true}\n"
    "\n";

TEST(SseParserTest, ParsesDataAndControlFrames) {
  const auto events = ParseAll(kStream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "data");
  EXPECT_EQ(events[0].data, "[{\"seq\":1}]");
  EXPECT_EQ(events[1].event, "control");
  EXPECT_EQ(events[1].data, "{\"streamNextOffset\":\"1:1\",\"upToDate\":true}");
}

TEST(SseParserTest, AnySplitGivesTheSameEvents) {
  const auto whole = ParseAll(kStream);
  EXPECT_EQ(ParseBytewise(kStream), whole);
  for (std::size_t cut = 0; cut <= kStream.size(); ++cut) {
    SseParser parser;
    std::vector<SseEvent> out;
    ASSERT_TRUE(parser.Feed(kStream.substr(0, cut), out).ok());
    ASSERT_TRUE(parser.Feed(kStream.substr(cut), out).ok());
    EXPECT_EQ(out, whole) << "cut at " << cut;
  }
}

TEST(SseParserTest, JoinsDataLinesAndDefaultsTheType) {
  const auto events = ParseAll("data: a\ndata:b\ndata\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "message");
  EXPECT_EQ(events[0].data, "a\nb\n");  // "data" alone adds an empty line
}

TEST(SseParserTest, AcceptsCrLfAndCrLineEndsSplitAnywhere) {
  const std::string crlf = "event: x\r\ndata: 1\r\n\r\nevent: y\rdata: 2\r\r";
  const auto events = ParseBytewise(crlf);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "x");
  EXPECT_EQ(events[0].data, "1");
  EXPECT_EQ(events[1].event, "y");
  EXPECT_EQ(events[1].data, "2");
}

TEST(SseParserTest, EventWithoutDataIsNotDelivered) {
  const auto events = ParseAll("event: control\n\ndata: z\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "message");  // the type does not leak into the next event
}

TEST(SseParserTest, IncompleteEventIsHeldBack) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("data: partial\n", out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(parser.Feed("\n", out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "partial");
}

TEST(SseParserTest, KeepsTheLastIdAndSkipsABom) {
  const auto events = ParseAll("\xEF\xBB\xBFid: 7\ndata: a\n\ndata: b\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[1].id, "7");
  EXPECT_EQ(events[0].data, "a");
}

TEST(SseParserTest, LineLongerThanTheLimitFailsForGood) {
  SseParser parser(SseLimits{.max_line_bytes = 8, .max_event_bytes = 100});
  std::vector<SseEvent> out;
  const Status status = parser.Feed("data: 0123456789\n\n", out);
  EXPECT_EQ(status.code(), ErrorCode::kTooLarge);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(parser.Feed("data: ok\n\n", out).code(), ErrorCode::kTooLarge);
  EXPECT_TRUE(out.empty());
}

TEST(SseParserTest, EventLargerThanTheLimitFails) {
  SseParser parser(SseLimits{.max_line_bytes = 100, .max_event_bytes = 10});
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("data: 12345\n", out).ok());
  EXPECT_EQ(parser.Feed("data: 67890\n", out).code(), ErrorCode::kTooLarge);
}

// The type counts toward the event's size whichever comes first, its data or its `event:` line.
TEST(SseParserTest, ATypeAfterTheDataCountsTowardTheLimit) {
  SseParser parser(SseLimits{.max_line_bytes = 32, .max_event_bytes = 8});
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.Feed("data: abc\n", out).ok());
  EXPECT_EQ(parser.Feed("event: abcdefghij\n\n", out).code(), ErrorCode::kTooLarge);
  EXPECT_TRUE(out.empty());

  SseParser skipping(SseLimits{.max_line_bytes = 32, .max_event_bytes = 8, .skip_oversize = true});
  ASSERT_TRUE(skipping.Feed("data: abc\nevent: abcdefghij\n\ndata: ok\n\n", out).ok());
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, "ok");
  EXPECT_EQ(skipping.dropped(), 1U);
}

TEST(SseParserTest, EventsWithinTheLimitsPass) {
  SseParser parser(SseLimits{.max_line_bytes = 16, .max_event_bytes = 16});
  std::vector<SseEvent> out;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(parser.Feed("data: 0123456789\n\n", out).ok());
  EXPECT_EQ(out.size(), 100u);
}

TEST(SseParserTest, SkipOversizeDropsWholeEventsAndGoesOn) {
  SseParser parser(SseLimits{.max_line_bytes = 24, .max_event_bytes = 16, .skip_oversize = true});
  std::vector<SseEvent> out;
  const std::string long_line = "data: " + std::string(40, 'x');
  // A line over the line bound, an event over the event bound (two lines), then small ones.
  ASSERT_TRUE(parser
                  .Feed(long_line + "\ndata: tail\n\ndata: small\n\ndata: 0123456789\n"
                                    "data: abcdefgh\n\n",
                        out)
                  .ok());
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, "small");
  EXPECT_EQ(parser.dropped(), 2U);
  ASSERT_TRUE(parser.Feed("data: after\n\n", out).ok());
  ASSERT_EQ(out.size(), 2U);
  EXPECT_EQ(out[1].data, "after");
}

}  // namespace
}  // namespace agentstream::net

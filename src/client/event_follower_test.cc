#include "client/event_follower.h"

#include <gtest/gtest.h>

#include "client/testing/canned_server.h"

namespace agentstream::client {
namespace {

std::string Envelopes(std::initializer_list<std::uint64_t> seqs) {
  std::string out = "[";
  for (std::uint64_t seq : seqs) {
    EventRecord record;
    record.session = SessionId("ses_1");
    record.epoch = Epoch(1);
    record.seq = Seq(seq);
    record.kind = static_cast<std::uint16_t>(EventKind::kNotice);
    record.payload = R"({"level":"info","text":"n"})";
    if (out.size() > 1) out += ",";
    out += EncodeEnvelope(record);
  }
  return out + "]";
}

std::string Data(std::initializer_list<std::uint64_t> seqs) {
  return "event: data\ndata: " + Envelopes(seqs) + "\n\n";
}

std::string Control(const char* offset) {
  return std::string("event: control\ndata: {\"streamNextOffset\":\"") + offset +
         "\",\"upToDate\":true}\n\n";
}

EventFollowerOptions Fast() {
  return {.first_backoff = std::chrono::milliseconds(1),
          .max_backoff = std::chrono::milliseconds(2)};
}

TEST(EventFollowerTest, ResumesFromTheLastControlOffsetWithoutGapOrDuplicate) {
  CannedServer server({
      // Delivers 1..3, but its last control named 1:1, then the connection breaks mid-stream.
      SseReply(Data({1, 2}) + Control("1:1") + Data({3}), /*complete=*/false),
      // The resumed read replays 2 and 3, then delivers 4; the daemon then ends the stream.
      SseReply(Data({2, 3, 4}) + Control("1:4") + ": keep-alive\n\n", /*complete=*/true),
      // The agent is gone: an error retrying cannot fix.
      JsonReply(404, R"({"error":{"code":"not_found","message":"no agent ses_1"}})"),
  });
  auto http = Transport::Create({.url = server.url()});
  ASSERT_TRUE(http.ok());
  EventFollower follower(**http, "ses_1", Fast());
  std::vector<std::uint64_t> seqs;
  int retries = 0;
  const Status status = follower.Run(
      [&](const EventRecord& record) {
        seqs.push_back(record.seq.value());
        return true;
      },
      [&](const Status&, std::chrono::milliseconds) { ++retries; });
  EXPECT_EQ(status.code(), ErrorCode::kNotFound) << status.ToString();
  EXPECT_NE(status.message().find("no agent ses_1"), std::string::npos);
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(retries, 2);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(requests[0].starts_with("GET /v1/agents/ses_1/events?offset=-1&live=sse "));
  EXPECT_TRUE(requests[1].starts_with("GET /v1/agents/ses_1/events?offset=1:1&live=sse "));
  EXPECT_TRUE(requests[2].starts_with("GET /v1/agents/ses_1/events?offset=1:4&live=sse "));
}

TEST(EventFollowerTest, StopsWhenTheCallbackSaysSo) {
  CannedServer server({SseReply(Data({1, 2, 3}) + Control("1:3"), /*complete=*/false)});
  auto http = Transport::Create({.url = server.url()});
  ASSERT_TRUE(http.ok());
  EventFollower follower(**http, "ses_1", EventFollowerOptions{.from = "1:0"});
  std::vector<std::uint64_t> seqs;
  const Status status = follower.Run(
      [&](const EventRecord& record) {
        seqs.push_back(record.seq.value());
        return record.seq.value() < 2;
      },
      nullptr);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_TRUE(server.requests().at(0).starts_with("GET /v1/agents/ses_1/events?offset=1:0&"));
}

TEST(EventFollowerTest, AFrameThatDoesNotDecodeEndsTheFollow) {
  CannedServer server({SseReply("event: data\ndata: [{\"v\":1}]\n\n", true)});
  auto http = Transport::Create({.url = server.url()});
  ASSERT_TRUE(http.ok());
  EventFollower follower(**http, "ses_1", Fast());
  const Status status = follower.Run([](const EventRecord&) { return true; }, nullptr);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.ToString();
}

}  // namespace
}  // namespace agentstream::client

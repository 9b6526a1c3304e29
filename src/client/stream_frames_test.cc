#include "client/stream_frames.h"

#include <gtest/gtest.h>

#include <string>

namespace agentstream::client {
namespace {

EventRecord Record(std::uint64_t epoch, std::uint64_t seq) {
  EventRecord record;
  record.session = SessionId("ses_1");
  record.epoch = Epoch(epoch);
  record.seq = Seq(seq);
  record.time = 1700000000000;
  record.kind = static_cast<std::uint16_t>(EventKind::kNotice);
  record.payload = R"({"level":"info","text":"n)" + std::to_string(seq) + R"("})";
  return record;
}

std::string Array(const std::vector<EventRecord>& records) {
  std::string out = "[";
  for (const auto& record : records) {
    if (out.size() > 1) out += ",";
    out += EncodeEnvelope(record);
  }
  return out + "]";
}

TEST(StreamFramesTest, DecodesADataFrame) {
  auto frame = DecodeStreamFrame({"data", Array({Record(1, 1), Record(1, 2)}), ""});
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  ASSERT_EQ(frame->events.size(), 2u);
  EXPECT_EQ(frame->events[1].seq, Seq(2));
  EXPECT_EQ(frame->events[1].payload, Record(1, 2).payload);
  EXPECT_FALSE(frame->next_offset);
}

TEST(StreamFramesTest, DecodesAControlFrame) {
  auto frame = DecodeStreamFrame({"control", R"({"streamNextOffset":"1:7","upToDate":true})", ""});
  ASSERT_TRUE(frame.ok());
  EXPECT_TRUE(frame->events.empty());
  EXPECT_EQ(frame->next_offset, "1:7");
  EXPECT_TRUE(frame->up_to_date);
}

TEST(StreamFramesTest, AControlFrameCanReportADaemonError) {
  auto frame = DecodeStreamFrame({"control", R"({"error":"IoError"})", ""});
  EXPECT_EQ(frame.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(frame.status().message().find("IoError"), std::string::npos);
}

TEST(StreamFramesTest, IgnoresOtherEventTypes) {
  auto frame = DecodeStreamFrame({"message", "whatever", ""});
  ASSERT_TRUE(frame.ok());
  EXPECT_TRUE(frame->events.empty());
  EXPECT_FALSE(frame->next_offset);
}

TEST(StreamFramesTest, RejectsMalformedFrames) {
  EXPECT_EQ(DecodeStreamFrame({"data", "[{", ""}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(DecodeStreamFrame({"data", "{}", ""}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(DecodeStreamFrame({"data", "[{\"v\":1}]", ""}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(DecodeStreamFrame({"control", "[]", ""}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(DecodeStreamFrame({"control", R"({"streamNextOffset":5})", ""}).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(StreamFramesTest, NewerEnvelopeVersionIsUnsupported) {
  std::string envelope = EncodeEnvelope(Record(1, 1));
  envelope.replace(envelope.find("\"v\":1"), 5, "\"v\":99");
  EXPECT_EQ(DecodeEnvelopeArray("[" + envelope + "]").status().code(),
            ErrorCode::kUnsupportedVersion);
}

TEST(CursorDeduperTest, AdmitsEachSeqOncePerEpoch) {
  CursorDeduper seen;
  // A first read delivers 1..3, the connection drops, the resumed read replays 2..3 then 4.
  std::vector<std::uint64_t> admitted;
  for (std::uint64_t seq : {1, 2, 3, 2, 3, 4}) {
    if (seen.Admit({Epoch(1), Seq(seq)})) admitted.push_back(seq);
  }
  EXPECT_EQ(admitted, (std::vector<std::uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(seen.HighWater(Epoch(1)), Seq(4));
  // A new epoch (rewind) starts its own count.
  EXPECT_TRUE(seen.Admit({Epoch(2), Seq(3)}));
  EXPECT_FALSE(seen.Admit({Epoch(2), Seq(3)}));
  EXPECT_FALSE(seen.Admit({Epoch(1), Seq(4)}));
  EXPECT_EQ(seen.HighWater(Epoch(3)), Seq(0));
}

TEST(CursorDeduperTest, ForgetsTheLowestEpochPastItsBound) {
  CursorDeduper seen;
  for (std::uint64_t e = 1; e <= CursorDeduper::kMaxEpochs + 1; ++e) {
    ASSERT_TRUE(seen.Admit({Epoch(e), Seq(1)}));
  }
  EXPECT_EQ(seen.HighWater(Epoch(1)), Seq(0));   // forgotten
  EXPECT_FALSE(seen.Admit({Epoch(1), Seq(5)}));  // older than anything remembered: refused
  EXPECT_FALSE(seen.Admit({Epoch(CursorDeduper::kMaxEpochs + 1), Seq(1)}));
}

}  // namespace
}  // namespace agentstream::client

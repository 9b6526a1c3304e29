#include "timeline/event_log_reader.h"

#include <gtest/gtest.h>

#include "core/timeline/projection.h"
#include "store/memory_log.h"

namespace agentstream {
namespace {

using timeline::BuildPage;
using timeline::PageDirection;
using timeline::PageRequest;

class EventLogReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(log_.CreateSession(session_, SessionMeta{"scripted", "/tmp"}, {}).ok());
    Append({MakeNewEvent(ToolCallStart{ToolCallId("t"), "Bash"}, TurnId("turn_1"))});
    for (int i = 0; i < 5000; ++i)
      Append({MakeNewEvent(AssistantMessageDelta{MessageId("m" + std::to_string(i / 10)), "x"})});
    Append({MakeNewEvent(
        ToolCallEnd{ToolCallId("t"), ToolCallStatus::kCompleted, std::string("ok")})});
  }
  void Append(std::vector<NewEvent> events) {
    AppendRequest request;
    request.session = session_;
    request.events = std::move(events);
    ASSERT_TRUE(log_.Append(std::move(request)).ok());
  }

  MemoryEventLog log_;
  SessionId session_{"ses_1"};
};

TEST_F(EventLogReaderTest, ReadsExactRangesAcrossBatches) {
  EventLogReader reader(log_, session_, 7);
  Result<std::vector<Event>> events = reader.ReadRange(Epoch(1), Seq(10), Seq(30));
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 21u);
  EXPECT_EQ(events->front().seq, Seq(10));
  EXPECT_EQ(events->back().seq, Seq(30));
  EXPECT_EQ(reader.reads(), 3u);
  EXPECT_EQ(reader.ReadRange(Epoch(9), Seq(1), Seq(2)).status().code(), ErrorCode::kNotFound);
}

TEST_F(EventLogReaderTest, IndexBuiltFromTheLogPagesWithTheFarToolEnd) {
  Result<timeline::ProjectionIndex> index = BuildProjectionIndex(log_, session_);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(index->tail(), Seq(5002));
  EXPECT_EQ(index->size(), 501u);  // the tool call and 500 messages
  EventLogReader reader(log_, session_);
  PageRequest request;
  request.direction = PageDirection::kBefore;
  request.cursor = Cursor{Epoch(1), Seq(20)};
  request.max_items = 3;
  Result<timeline::Page> page = BuildPage(*index, reader, request);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 3u);
  EXPECT_EQ(std::get<timeline::ToolCallBody>(page->items[0].body).output, "ok");
  EXPECT_EQ(std::get<timeline::AssistantMessageBody>(page->items[1].body).text, "xxxxxxxxxx");
  EXPECT_LE(reader.reads(), 2u);  // the page's ranges and the far end, nothing in between
  // The live path keeps the index current without a rebuild.
  Append({MakeNewEvent(UserMessage{MessageId("u"), "c9", "more"}, TurnId("turn_2"))});
  Result<ReadResult> tail =
      log_.Read(ReadRequest{session_, std::nullopt, ReadDirection::kBackward, Seq(0), 1});
  ASSERT_TRUE(tail.ok());
  index->Add(DecodeRecord(tail->events.at(0)).value());
  request.direction = PageDirection::kTail;
  page = BuildPage(*index, reader, request);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(std::get<timeline::UserMessageBody>(page->items.back().body).text, "more");
}

}  // namespace
}  // namespace agentstream

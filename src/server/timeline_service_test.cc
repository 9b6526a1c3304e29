// TimelineService keeps its indexes within a byte budget, dropping the least recently paged.
#include "server/timeline_service.h"

#include <gtest/gtest.h>

#include "store/memory_log.h"

namespace agentstream::server {
namespace {

class TimelineServiceTest : public ::testing::Test {
 protected:
  // A session of `notices` notices (one timeline item each).
  SessionId Session(const std::string& id, int notices) {
    std::vector<NewEvent> events;
    for (int i = 0; i < notices; ++i)
      events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "n" + std::to_string(i)}));
    EXPECT_TRUE(log_.CreateSession(SessionId(id), SessionMeta{"scripted", "/w", id}, {}).ok());
    AppendRequest request;
    request.session = SessionId(id);
    request.events = std::move(events);
    EXPECT_TRUE(log_.Append(std::move(request)).ok());
    return SessionId(id);
  }
  static std::string Keys(const timeline::Page& page) {
    std::string out;
    for (const timeline::ProjectedItem& item : page.items) out += item.key + ",";
    return out;
  }

  MemoryEventLog log_;
};

TEST_F(TimelineServiceTest, IndexesStayWithinTheBudgetAndADroppedOneIsRebuilt) {
  const SessionId a = Session("a", 3000), b = Session("b", 3000), c = Session("c", 3000);
  TimelineService measure(log_);
  ASSERT_TRUE(measure.Page(a, {}).ok());
  const std::size_t one = measure.IndexBytes();
  ASSERT_GT(one, 3000u * sizeof(timeline::ItemSpan));  // at least a span per item

  TimelineService service(log_, 256, 2 * one + one / 2);  // room for two
  Result<timeline::Page> first = service.Page(a, {});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(service.Page(b, {}).ok());
  EXPECT_EQ(service.IndexBytes(), 2 * one);
  ASSERT_TRUE(service.Page(c, {}).ok());  // drops a's, the least recently paged
  EXPECT_EQ(service.IndexBytes(), 2 * one);
  Result<timeline::Page> again = service.Page(a, {});  // rebuilt; drops b's
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Keys(*again), Keys(*first));
  EXPECT_EQ(service.IndexBytes(), 2 * one);

  // A budget smaller than one index keeps the one being paged, alone.
  TimelineService tiny(log_, 256, 1);
  ASSERT_TRUE(tiny.Page(a, {}).ok());
  ASSERT_TRUE(tiny.Page(b, {}).ok());
  EXPECT_EQ(tiny.IndexBytes(), one);
}

TEST_F(TimelineServiceTest, AnIndexGrowsWithItsSessionAndIsAccountedAtEachPage) {
  const SessionId a = Session("a", 100);
  TimelineService service(log_);
  ASSERT_TRUE(service.Page(a, {}).ok());
  const std::size_t small = service.IndexBytes();
  AppendRequest more;
  more.session = a;
  for (int i = 0; i < 2000; ++i)
    more.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "m"}));
  ASSERT_TRUE(log_.Append(std::move(more)).ok());
  ASSERT_TRUE(service.Page(a, {}).ok());
  EXPECT_GT(service.IndexBytes(), small + 2000 * sizeof(timeline::ItemSpan));
}

}  // namespace
}  // namespace agentstream::server

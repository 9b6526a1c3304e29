// The durable projection index against the in-memory one, on each store that keeps it: random
// histories with forks and rewinds, indexed in random steps, page exactly as the in-memory index
// does; a page after a reopen reads only the page's events; a damaged row is refused.
#include "timeline/durable_index.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <sqlite3.h>

#include <boost/json.hpp>

#include "core/timeline/pager.h"
#include "core/timeline/test_events.h"
#include "store/test_backend.h"
#include "timeline/event_log_reader.h"

namespace agentstream {
namespace {

using timeline::PageDirection;
using timeline::PageRequest;
using timeline::testing::RandomPayload;

std::vector<NewEvent> RandomEvents(std::size_t max) {
  const auto ops = *rc::gen::container<std::vector<std::pair<int, int>>>(
      *rc::gen::inRange<std::size_t>(0, max),
      rc::gen::pair(rc::gen::inRange(0, 9), rc::gen::inRange(0, 40)));
  std::vector<NewEvent> out;
  for (const auto& [kind, key] : ops) out.push_back(MakeNewEvent(RandomPayload(kind, key)));
  return out;
}

void Append(EventLog& log, const SessionId& session, std::vector<NewEvent> events) {
  if (events.empty()) return;
  AppendRequest request;
  request.session = session;
  request.events = std::move(events);
  RC_ASSERT(log.Append(std::move(request)).ok());
}

std::string PageText(const timeline::Page& page) {
  boost::json::array items;
  for (const timeline::ProjectedItem& item : page.items) items.push_back(ItemToJson(item));
  return boost::json::serialize(items) + " older=" + std::to_string(page.has_older) +
         " newer=" + std::to_string(page.has_newer) + " start=" + FormatCursor(page.start_cursor) +
         " end=" + FormatCursor(page.end_cursor) + " reset=" + std::to_string(page.reset) +
         " tail=" + std::to_string(page.tail.value());
}

// Compares random pages of the current epoch of `session` from both indexes.
void CheckPages(EventLog& log, const SessionId& session) {
  ItemIndexStore& store = *log.item_index();
  Result<Cursor> tail = log.Tail(session);
  RC_ASSERT(tail.ok());
  // Indexed in random steps, so that batches end anywhere; some steps defer their last batch's
  // commit and make it afterwards, as the background indexer does.
  std::uint64_t at = 0;
  while (at < tail->seq.value()) {
    at = std::min(tail->seq.value(), at + *rc::gen::inRange<std::uint64_t>(1, 40));
    std::vector<ItemCommit> deferred;
    const bool defer = *rc::gen::arbitrary<bool>();
    Status indexed = CatchUpIndex(store, log, session, tail->epoch, Seq(at), nullptr, nullptr,
                                  nullptr, defer ? &deferred : nullptr);
    RC_ASSERT(indexed.ok());
    RC_ASSERT(deferred.size() <= 1u);
    if (!deferred.empty()) {
      Result<std::vector<Status>> outcomes = store.CommitItemsTogether(deferred);
      RC_ASSERT(outcomes.ok() && outcomes->size() == 1u && outcomes->front().ok());
    }
  }
  RC_ASSERT(CatchUpIndex(store, log, session, tail->epoch, tail->seq).ok());
  Result<timeline::ProjectionIndex> memory = BuildProjectionIndex(log, session, tail->epoch);
  RC_ASSERT(memory.ok());
  Result<std::unique_ptr<DurableIndexView>> durable =
      DurableIndexView::Open(store, session, tail->epoch);
  RC_ASSERT(durable.ok());
  RC_ASSERT((*durable)->size() == memory->size());
  RC_ASSERT((*durable)->tail() == memory->tail());
  for (int i = 0; i < 6; ++i) {
    PageRequest request;
    request.direction =
        *rc::gen::element(PageDirection::kTail, PageDirection::kBefore, PageDirection::kAfter);
    request.max_items = *rc::gen::inRange<std::size_t>(1, 6);
    if (request.direction != PageDirection::kTail)
      request.cursor =
          Cursor{tail->epoch, Seq(*rc::gen::inRange<std::uint64_t>(0, tail->seq.value() + 1))};
    EventLogReader a(log, session), b(log, session);
    Result<timeline::Page> want = timeline::BuildPage(*memory, a, request);
    Result<timeline::Page> got = timeline::BuildPage(**durable, b, request);
    RC_ASSERT(want.ok() == got.ok());
    if (want.ok()) RC_ASSERT(PageText(*want) == PageText(*got));
  }
}

class DurableIndexTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(GetParam());
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG is not set";
    ASSERT_NE(backend_->log().item_index(), nullptr);
  }
  EventLog& log() { return backend_->log(); }

  std::unique_ptr<testing::Backend> backend_;
};

TEST_P(DurableIndexTest, PagesAsTheInMemoryIndexOverForksAndRewinds) {
  int n = 0;
  const bool passed = rc::check("durable pages equal in-memory pages", [&] {
    const SessionId root("root_" + std::to_string(n++));
    RC_ASSERT(log().CreateSession(root, SessionMeta{"scripted", "/w"}, {}).ok());
    Append(log(), root, RandomEvents(120));
    CheckPages(log(), root);
    // A fork at a random point, then its own events (some extending items of the base).
    const std::uint64_t root_tail = log().Tail(root)->seq.value();
    const SessionId child("child_" + std::to_string(n));
    const Cursor at{Epoch(1), Seq(*rc::gen::inRange<std::uint64_t>(0, root_tail + 1))};
    RC_ASSERT(log().Fork(root, at, child, SessionMeta{"scripted", "/w"}, {}).ok());
    Append(log(), child, RandomEvents(60));
    CheckPages(log(), child);
    // The root goes on, then is rewound to a random point of its history.
    Append(log(), root, RandomEvents(30));
    const std::uint64_t now = log().Tail(root)->seq.value();
    const Cursor to{Epoch(1), Seq(*rc::gen::inRange<std::uint64_t>(0, now + 1))};
    RC_ASSERT(log().Rewind(root, to, {}).ok());
    Append(log(), root, RandomEvents(40));
    CheckPages(log(), root);
    CheckPages(log(), child);  // the fork's base did not change
    // A fork of the fork.
    const std::uint64_t child_tail = log().Tail(child)->seq.value();
    const SessionId grandchild("grandchild_" + std::to_string(n));
    const Cursor at2{Epoch(1), Seq(*rc::gen::inRange<std::uint64_t>(0, child_tail + 1))};
    RC_ASSERT(log().Fork(child, at2, grandchild, SessionMeta{"scripted", "/w"}, {}).ok());
    Append(log(), grandchild, RandomEvents(40));
    CheckPages(log(), grandchild);
  });
  EXPECT_TRUE(passed);
}

// Commits made together land each as it would alone: one from a stale state writes nothing, nor
// does one whose row the store cannot keep (PostgreSQL's text holds no NUL byte), and the others
// land all the same.
TEST_P(DurableIndexTest, CommitsMadeTogetherLandOrFailEachAlone) {
  ItemIndexStore& store = *log().item_index();
  for (const char* id : {"a", "b", "c", "d"})
    ASSERT_TRUE(log().CreateSession(SessionId(id), SessionMeta{"scripted", "/w"}, {}).ok());
  const ItemIndexState one{kItemIndexFormat, Seq(1), 1, 0};
  const ItemIndexState two{kItemIndexFormat, Seq(2), 2, 0};
  auto row = [](std::uint64_t ordinal, std::string key) {
    return ItemRow{ordinal,
                   7,
                   std::move(key),
                   false,
                   Seq(ordinal + 1),
                   Seq(ordinal + 1),
                   std::to_string(ordinal + 1)};
  };
  ASSERT_TRUE(
      store.CommitItems({SessionId("b"), Epoch(1), std::nullopt, one, {row(0, "#b")}}).ok());
  const std::vector<ItemCommit> commits = {
      {SessionId("a"), Epoch(1), std::nullopt, one, {row(0, "#a")}},
      {SessionId("b"), Epoch(1), std::nullopt, two, {row(1, "#stale")}},
      {SessionId("c"), Epoch(1), std::nullopt, one, {row(0, std::string("#c\0", 3))}},
      {SessionId("d"), Epoch(1), std::nullopt, one, {row(0, "#d")}},
  };
  const bool c_kept = testing::CheckFourOutcomes(store.CommitItemsTogether(commits));
  auto keys = [&](const char* id) {
    std::string out;
    Result<std::vector<ItemRow>> rows = store.ItemsBetween(SessionId(id), Epoch(1), 0, 10);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (rows.ok())
      for (const ItemRow& r : *rows) out += r.key;
    return out;
  };
  EXPECT_EQ(keys("a"), "#a");
  EXPECT_EQ(keys("b"), "#b");
  EXPECT_EQ(**store.LoadItemState(SessionId("b"), Epoch(1)), one);
  EXPECT_EQ(store.LoadItemState(SessionId("c"), Epoch(1))->has_value(), c_kept);
  EXPECT_EQ(keys("d"), "#d");
  // None is an answer too.
  Result<std::vector<Status>> none = store.CommitItemsTogether({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// A session of 16-event turns, indexed, then reopened (a daemon restart): the tail page and a
// page in the middle read only their own items' events, and catching up reads nothing.
TEST_P(DurableIndexTest, PagesAfterAReopenReadOnlyThePage) {
  const SessionId session("long");
  ASSERT_TRUE(log().CreateSession(session, SessionMeta{"scripted", "/w"}, {}).ok());
  constexpr int kTurns = 600;
  for (int turn = 0; turn < kTurns; ++turn) {
    std::vector<NewEvent> events;
    const std::string n = std::to_string(turn);
    const MessageId m("m" + n);
    const ToolCallId t("t" + n);
    events.push_back(MakeNewEvent(UserMessage{MessageId("u" + n), "c" + n, "prompt"}));
    events.push_back(MakeNewEvent(AssistantMessageStart{m}));
    for (int d = 0; d < 10; ++d) events.push_back(MakeNewEvent(AssistantMessageDelta{m, "x"}));
    events.push_back(MakeNewEvent(AssistantMessageEnd{m}));
    events.push_back(MakeNewEvent(ToolCallStart{t, "Bash"}));
    events.push_back(MakeNewEvent(ToolCallOutput{t, "out"}));
    events.push_back(MakeNewEvent(ToolCallEnd{t}));
    AppendRequest request;
    request.session = session;
    request.events = std::move(events);
    ASSERT_TRUE(log().Append(std::move(request)).ok());
  }
  // A tool call open across most of the history: found as a long item by `after` pages.
  {
    AppendRequest request;
    request.session = session;
    request.events.push_back(MakeNewEvent(ToolCallEnd{ToolCallId("t3")}));
    ASSERT_TRUE(log().Append(std::move(request)).ok());
  }
  const Seq tail = log().Tail(session)->seq;
  std::size_t read = 0;
  ASSERT_TRUE(CatchUpIndex(*log().item_index(), log(), session, Epoch(1), tail, &read).ok());
  EXPECT_EQ(read, tail.value());  // built once, in batches

  backend_->Reopen();
  read = 0;
  ASSERT_TRUE(CatchUpIndex(*log().item_index(), log(), session, Epoch(1), tail, &read).ok());
  EXPECT_EQ(read, 0u);
  auto view = DurableIndexView::Open(*log().item_index(), session, Epoch(1));
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ((*view)->size(), kTurns * 3u);

  for (const PageDirection direction :
       {PageDirection::kTail, PageDirection::kBefore, PageDirection::kAfter}) {
    PageRequest request;
    request.direction = direction;
    request.max_items = 50;
    if (direction != PageDirection::kTail) request.cursor = Cursor{Epoch(1), Seq(tail.value() / 2)};
    EventLogReader reader(log(), session);
    Result<timeline::Page> page = timeline::BuildPage(**view, reader, request);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_EQ(page->items.size(), 50u);
    // 50 items are about 17 turns: a few hundred events in a few reads, never the history.
    EXPECT_LE(reader.reads(), 4u);
  }
  // The tool call t3, open from turn 3 to the tail, is found open across the end of turn 300.
  Result<std::size_t> i0 = (*view)->FirstStartingAfter(Seq(16 * 300));
  ASSERT_TRUE(i0.ok());
  Result<std::vector<timeline::IndexView::Numbered>> open =
      (*view)->EndingAfter(*i0, Seq(16 * 300));
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u) << open->back().second.key << " "
                              << open->back().second.seq_start.value() << "-"
                              << open->back().second.seq_end.value();
  EXPECT_EQ(open->front().second.key, "t:t3");
  EXPECT_EQ(open->front().second.seq_end, tail);
}

TEST(DurableIndexRanges, RoundTripAndRefuseMalformedText) {
  const std::vector<timeline::SeqRange> ranges = {
      {Seq(1), Seq(3)}, {Seq(7), Seq(7)}, {Seq(9), Seq(12)}};
  EXPECT_EQ(EncodeRanges(ranges), "1-3,7,9-12");
  Result<std::vector<timeline::SeqRange>> back = DecodeRanges("1-3,7,9-12");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, ranges);
  for (const char* bad : {"", ",", "1,", "3-1", "1-3,3", "1-3,4", "0", "x", "1--2", "1-3,2-5",
                          "99999999999999999999999"}) {
    EXPECT_EQ(DecodeRanges(bad).status().code(), ErrorCode::kCorruption) << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, DurableIndexTest, ::testing::Values("sqlite", "postgres"));

}  // namespace
}  // namespace agentstream

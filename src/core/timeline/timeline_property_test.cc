// Property tests of paging over random logs: backward paging from the tail visits every item
// exactly once with the same content as the full projection; forward catch-up from any cursor
// delivers every item changed after it and ends at the tail; reads stay proportional to the page.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>

#include "core/timeline/pager.h"
#include "core/timeline/projection.h"
#include "core/timeline/test_events.h"

namespace agentstream::timeline::testing {
namespace {

LogBuilder RandomLog() {
  const auto ops = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, 9), rc::gen::inRange(0, 40)));
  LogBuilder b;
  for (const auto& [kind, key] : ops) b.Add(RandomPayload(kind, key));
  return b;
}

RC_GTEST_PROP(PagerProperty, BackwardPagingVisitsEveryItemOnce, ()) {
  LogBuilder b = RandomLog();
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  const std::size_t limit = *rc::gen::inRange<std::size_t>(1, 8);
  PageRequest r;
  r.max_items = limit;
  r.max_bytes = *rc::gen::inRange<std::size_t>(1, 2000);
  std::vector<ProjectedItem> seen;
  for (int guard = 0; guard < 10000; ++guard) {
    Result<Page> page = BuildPage(p.index(), reader, r);
    RC_ASSERT(page.ok());
    RC_ASSERT(page->items.size() <= limit);
    seen.insert(seen.begin(), page->items.begin(), page->items.end());
    if (!page->has_older) break;
    RC_ASSERT(!page->items.empty());
    r.direction = PageDirection::kBefore;
    r.cursor = page->start_cursor;
  }
  RC_ASSERT(seen.size() == p.items().size());
  for (std::size_t i = 0; i < seen.size(); ++i)
    RC_ASSERT(ItemToJson(seen[i]) == ItemToJson(p.items()[i]));
}

RC_GTEST_PROP(PagerProperty, ForwardCatchUpDeliversEveryChange, ()) {
  LogBuilder b = RandomLog();
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  const std::uint64_t from = *rc::gen::inRange<std::uint64_t>(0, b.events.size() + 1);
  PageRequest r;
  r.direction = PageDirection::kAfter;
  r.cursor = Cursor{Epoch(1), Seq(from)};
  r.max_items = *rc::gen::inRange<std::size_t>(1, 6);
  r.max_bytes = *rc::gen::inRange<std::size_t>(1, 2000);
  std::map<std::string, boost::json::object> last;  // latest delivered version per key
  std::size_t budget = 0;                           // events the pages' items are made of
  for (int guard = 0; guard < 10000; ++guard) {
    const std::size_t before = reader.events_read;
    Result<Page> page = BuildPage(p.index(), reader, r);
    RC_ASSERT(page.ok());
    std::size_t sources = 0, ranges = 0;
    for (const auto& item : page->items) {
      RC_ASSERT(item.seq_end.value() > from);
      last[item.key] = ItemToJson(item);
      for (const auto& range : item.source_seq_ranges)
        sources += range.last.value() - range.first.value() + 1, ++ranges;
    }
    // Reads cover the items' sources plus at most kPageReadGap between ranges. (When the byte
    // budget cut the page, the cut items were read too, so the bound is only checked otherwise.)
    budget = sources + ranges * kPageReadGap;
    const bool cut_by_bytes = page->has_newer && page->items.size() < r.max_items;
    if (!cut_by_bytes) RC_ASSERT(reader.events_read - before <= budget);
    RC_ASSERT(page->end_cursor.seq >= r.cursor->seq);
    if (!page->has_newer) {
      RC_ASSERT(page->end_cursor.seq == Seq(b.events.size()));
      break;
    }
    r.cursor = page->end_cursor;
  }
  for (const auto& item : p.items()) {
    if (item.seq_end.value() <= from) continue;
    RC_ASSERT(last.count(item.key) == 1);
    RC_ASSERT(last[item.key] == ItemToJson(item));
  }
}

}  // namespace
}  // namespace agentstream::timeline::testing

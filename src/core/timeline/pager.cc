#include "core/timeline/pager.h"

#include <algorithm>
#include <boost/json.hpp>
#include <unordered_map>

#include "core/timeline/assembler.h"

namespace agentstream::timeline {

namespace {

// Loads the full items of `spans` by reading exactly their source ranges.
Result<std::vector<ProjectedItem>> LoadItems(Epoch epoch, RawEventReader& reader,
                                             const std::vector<ItemSpan>& spans) {
  std::vector<SeqRange> ranges;
  std::unordered_map<std::string, std::size_t> slot;  // key -> position in `items`
  std::vector<ProjectedItem> items(spans.size());
  std::vector<std::uint64_t> expected(spans.size(), 0);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    slot.emplace(spans[i].key, i);
    for (const SeqRange& r : spans[i].ranges) {
      ranges.push_back(r);
      expected[i] += r.last.value() - r.first.value() + 1;
    }
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const SeqRange& a, const SeqRange& b) { return a.first < b.first; });
  std::vector<SeqRange> reads;
  for (const SeqRange& r : ranges) {
    if (!reads.empty() && reads.back().last.value() + kPageReadGap >= r.first.value()) {
      reads.back().last = std::max(reads.back().last, r.last);
    } else {
      reads.push_back(r);
    }
  }
  std::vector<std::uint64_t> folded(spans.size(), 0);
  for (const SeqRange& read : reads) {
    AS_ASSIGN_OR_RETURN(std::vector<Event> events, reader.ReadRange(epoch, read.first, read.last));
    for (const Event& e : events) {
      std::optional<ItemKey> key = ItemKeyOf(e);
      if (!key) continue;
      auto it = slot.find(key->key);
      if (it == slot.end()) continue;
      ProjectedItem& item = items[it->second];
      if (folded[it->second]++ == 0) item = NewItem(*key, e);
      FoldIntoItem(item, e);
    }
  }
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (folded[i] != expected[i])
      return Error(ErrorCode::kInternal,
                   "the log does not hold the source events of item " + spans[i].key);
  }
  return items;
}

std::size_t JsonSize(const ProjectedItem& item) {
  return boost::json::serialize(ItemToJson(item)).size();
}

// Keeps items (given in priority order) while they fit `max_bytes`; at least one. Returns how
// many were kept.
std::size_t FitBytes(const std::vector<ProjectedItem>& items, std::size_t max_bytes,
                     std::size_t* bytes) {
  std::size_t kept = 0;
  *bytes = 0;
  for (const ProjectedItem& item : items) {
    const std::size_t size = JsonSize(item);
    if (kept > 0 && *bytes + size > max_bytes) break;
    *bytes += size, ++kept;
  }
  return kept;
}

void SortByStart(std::vector<ProjectedItem>& items) {
  std::sort(items.begin(), items.end(), [](const ProjectedItem& a, const ProjectedItem& b) {
    return a.seq_start < b.seq_start;
  });
}

// The newest items with ordinal < `hi` (tail and before pages).
Result<Page> Backward(IndexView& index, RawEventReader& reader, std::size_t hi,
                      const PageRequest& request, Page page) {
  const std::size_t lo = hi > request.max_items ? hi - request.max_items : 0;
  AS_ASSIGN_OR_RETURN(std::vector<ItemSpan> spans, index.Spans(lo, hi));
  std::reverse(spans.begin(), spans.end());  // newest first
  AS_ASSIGN_OR_RETURN(std::vector<ProjectedItem> items, LoadItems(index.epoch(), reader, spans));
  const std::size_t kept = FitBytes(items, request.max_bytes, &page.bytes);
  items.resize(kept);
  SortByStart(items);
  page.items = std::move(items);
  page.has_older = hi - kept > 0;
  page.has_newer = hi < index.size();
  if (!page.items.empty()) page.start_cursor = {index.epoch(), page.items.front().seq_start};
  return page;
}

struct Candidate {
  Seq first_touch;  // the item's first source seq after the cursor
  ItemSpan span;
};

// Items changed after `after`, by first change: those open across the cursor, then new ones.
Result<std::vector<Candidate>> AfterCandidates(IndexView& index, std::size_t i0, Seq after,
                                               std::size_t limit) {
  std::vector<Candidate> out;
  AS_ASSIGN_OR_RETURN(std::vector<IndexView::Numbered> open, index.EndingAfter(i0, after));
  for (auto& [ordinal, span] : open) {
    for (const SeqRange& r : span.ranges) {
      if (r.last <= after) continue;
      out.push_back({std::max(r.first, after.next()), std::move(span)});
      break;
    }
  }
  AS_ASSIGN_OR_RETURN(std::vector<ItemSpan> fresh, index.Spans(i0, i0 + limit));
  for (ItemSpan& span : fresh) out.push_back({span.seq_start, std::move(span)});
  std::sort(out.begin(), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.first_touch < b.first_touch; });
  return out;
}

Result<Page> Forward(IndexView& index, RawEventReader& reader, Seq after,
                     const PageRequest& request, Page page) {
  AS_ASSIGN_OR_RETURN(std::size_t i0, index.FirstStartingAfter(after));
  AS_ASSIGN_OR_RETURN(std::vector<Candidate> candidates,
                      AfterCandidates(index, i0, after, request.max_items + 1));
  const std::size_t take = std::min(candidates.size(), request.max_items);
  std::vector<ItemSpan> spans;
  for (std::size_t i = 0; i < take; ++i) spans.push_back(candidates[i].span);
  AS_ASSIGN_OR_RETURN(std::vector<ProjectedItem> items, LoadItems(index.epoch(), reader, spans));
  const std::size_t kept = FitBytes(items, request.max_bytes, &page.bytes);
  items.resize(kept);
  SortByStart(items);
  page.items = std::move(items);
  page.has_newer = kept < candidates.size();
  const Seq end = page.has_newer ? Seq(candidates[kept].first_touch.value() - 1) : index.tail();
  page.start_cursor = {index.epoch(), after};
  page.end_cursor = {index.epoch(), end};
  page.has_older = i0 > 0;  // ordinals follow seq_start: item 0 started at or before `after`
  return page;
}

}  // namespace

Result<Page> BuildPage(const ProjectionIndex& index, RawEventReader& reader,
                       const PageRequest& request) {
  ProjectionIndexView view(index);
  return BuildPage(view, reader, request);
}

Result<Page> BuildPage(IndexView& index, RawEventReader& reader, const PageRequest& request_in) {
  PageRequest request = request_in;
  request.max_items = std::clamp<std::size_t>(request.max_items, 1, kMaxPageItems);
  Page page;
  page.epoch = index.epoch();
  page.tail = index.tail();
  page.start_cursor = page.end_cursor = {index.epoch(), index.tail()};
  if (request.direction != PageDirection::kTail) {
    if (!request.cursor)
      return Error(ErrorCode::kInvalidArgument, "a before/after page needs a cursor");
    if (request.cursor->epoch != index.epoch()) {
      page.reset = true;
      return Backward(index, reader, index.size(), request, std::move(page));
    }
    if (request.cursor->seq > index.tail())
      return Error(ErrorCode::kInvalidArgument, "cursor " + FormatCursor(*request.cursor) +
                                                    " is past the tail " +
                                                    FormatCursor({index.epoch(), index.tail()}));
  }
  switch (request.direction) {
    case PageDirection::kTail:
      return Backward(index, reader, index.size(), request, std::move(page));
    case PageDirection::kBefore: {
      const Seq c = request.cursor->seq;
      std::size_t hi = 0;
      if (c.value() > 0) {
        AS_ASSIGN_OR_RETURN(hi, index.FirstStartingAfter(Seq(c.value() - 1)));
      }
      page.end_cursor = {index.epoch(), Seq(c.value() == 0 ? 0 : c.value() - 1)};
      page.start_cursor = *request.cursor;
      return Backward(index, reader, hi, request, std::move(page));
    }
    case PageDirection::kAfter:
      return Forward(index, reader, request.cursor->seq, request, std::move(page));
  }
  return Error(ErrorCode::kInternal, "unknown page direction");
}

}  // namespace agentstream::timeline

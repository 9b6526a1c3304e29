#include "timeline/durable_index.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/event_codec.h"
#include "core/timeline/item.h"

namespace agentstream {

using timeline::ItemSpan;
using timeline::SeqRange;

std::string EncodeRanges(const std::vector<SeqRange>& ranges) {
  std::string out;
  for (const SeqRange& r : ranges) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.first.value());
    if (r.last != r.first) out += '-' + std::to_string(r.last.value());
  }
  return out;
}

namespace {

Status BadRanges(std::string_view text) {
  return Error(ErrorCode::kCorruption, "a stored timeline index row has unreadable ranges \"" +
                                           std::string(text.substr(0, 64)) + "\"");
}

// Parses a decimal seq at the front of `text`, advancing it.
bool TakeSeq(std::string_view& text, std::uint64_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc() || ptr == text.data()) return false;
  text.remove_prefix(static_cast<std::size_t>(ptr - text.data()));
  return true;
}

}  // namespace

Result<std::vector<SeqRange>> DecodeRanges(std::string_view text) {
  std::vector<SeqRange> out;
  std::string_view rest = text;
  while (!rest.empty()) {
    std::uint64_t first = 0, last = 0;
    if (!TakeSeq(rest, first)) return BadRanges(text);
    last = first;
    if (!rest.empty() && rest.front() == '-') {
      rest.remove_prefix(1);
      if (!TakeSeq(rest, last)) return BadRanges(text);
    }
    if (!rest.empty()) {
      if (rest.front() != ',' || rest.size() == 1) return BadRanges(text);
      rest.remove_prefix(1);
    }
    // Ascending, disjoint and non-adjacent (AddToRanges extends an adjacent range).
    if (first == 0 || last < first || (!out.empty() && first <= out.back().last.value() + 1))
      return BadRanges(text);
    out.push_back({Seq(first), Seq(last)});
  }
  if (out.empty()) return BadRanges(text);
  return out;
}

namespace {

Result<ItemSpan> SpanOf(const ItemRow& row) {
  constexpr auto kLastKind = static_cast<std::int64_t>(timeline::ItemKind::kUsage);
  if (row.kind < 0 || row.kind > kLastKind || row.key.empty() ||
      row.merges == (row.key.front() == '#'))
    return Error(ErrorCode::kCorruption, "a stored timeline index row (item " +
                                             std::to_string(row.ordinal) + ") does not decode");
  AS_ASSIGN_OR_RETURN(std::vector<SeqRange> ranges, DecodeRanges(row.ranges));
  if (ranges.front().first != row.seq_start || ranges.back().last != row.seq_end)
    return Error(ErrorCode::kCorruption, "a stored timeline index row (item " +
                                             std::to_string(row.ordinal) +
                                             ") disagrees with its ranges");
  return ItemSpan{static_cast<timeline::ItemKind>(row.kind), row.key, row.seq_start, row.seq_end,
                  std::move(ranges)};
}

// `span` without its source seqs after `limit`; nullopt when it starts after `limit`.
std::optional<ItemSpan> Clip(ItemSpan span, Seq limit) {
  if (span.seq_start > limit) return std::nullopt;
  while (span.ranges.back().first > limit) span.ranges.pop_back();
  if (span.ranges.back().last > limit) span.ranges.back().last = limit;
  span.seq_end = span.ranges.back().last;
  return span;
}

ItemRow RowOf(std::uint64_t ordinal, const ItemSpan& span) {
  return ItemRow{ordinal,
                 static_cast<std::int64_t>(span.kind),
                 span.key,
                 span.key.front() != '#',
                 span.seq_start,
                 span.seq_end,
                 EncodeRanges(span.ranges)};
}

}  // namespace

Result<std::unique_ptr<DurableIndexView>> DurableIndexView::Open(ItemIndexStore& store,
                                                                 const SessionId& session,
                                                                 Epoch epoch,
                                                                 std::optional<Seq> clip) {
  AS_ASSIGN_OR_RETURN(std::optional<ItemIndexState> state, store.LoadItemState(session, epoch));
  if (!state || state->format != kItemIndexFormat)
    return Error(ErrorCode::kNotFound, "no timeline index of " + session.str() + " epoch " +
                                           std::to_string(epoch.value()));
  return OpenAt(store, session, epoch, *state, clip);
}

Result<std::unique_ptr<DurableIndexView>> DurableIndexView::OpenAt(ItemIndexStore& store,
                                                                   const SessionId& session,
                                                                   Epoch epoch,
                                                                   const ItemIndexState& state,
                                                                   std::optional<Seq> clip) {
  if (clip && *clip > state.watermark)
    return Error(ErrorCode::kConflict,
                 "the timeline index of " + session.str() + " is behind the requested tail");
  std::unique_ptr<DurableIndexView> view(new DurableIndexView(store, session, epoch));
  view->tail_ = clip.value_or(state.watermark);
  view->size_ = static_cast<std::size_t>(state.items);
  view->base_items_ = static_cast<std::size_t>(state.base_items);
  AS_ASSIGN_OR_RETURN(std::optional<HistoryBase> base, store.EpochBase(session, epoch));
  if (base) {
    // A view clipped inside its base prefix sees the base clipped there too.
    view->base_seq_ = std::min(base->seq, view->tail_);
    AS_ASSIGN_OR_RETURN(view->base_, Open(store, base->session, base->epoch, view->base_seq_));
    if (view->base_seq_ < base->seq) {
      view->base_items_ = view->base_->size();
    } else if (view->base_->size() != view->base_items_) {
      return Error(ErrorCode::kCorruption,
                   "the timeline index of " + session.str() + " disagrees with its base's");
    }
  }
  if (view->tail_ < state.watermark) {
    // Clipped below the watermark (a base prefix): count only the items started by the clip.
    AS_ASSIGN_OR_RETURN(view->size_, view->FirstStartingAfter(view->tail_));
  }
  return view;
}

Result<std::optional<ItemSpan>> DurableIndexView::Clipped(const ItemRow& row) const {
  AS_ASSIGN_OR_RETURN(ItemSpan span, SpanOf(row));
  return Clip(std::move(span), tail_);
}

Result<std::vector<ItemSpan>> DurableIndexView::Spans(std::size_t lo, std::size_t hi) {
  hi = std::min(hi, size_);
  std::vector<ItemSpan> out;
  if (lo >= hi) return out;
  AS_ASSIGN_OR_RETURN(std::vector<ItemRow> rows, store_.ItemsBetween(session_, epoch_, lo, hi));
  std::vector<ItemSpan> from_base;
  if (base_ && lo < base_items_ && rows.size() < hi - lo) {
    AS_ASSIGN_OR_RETURN(from_base, base_->Spans(lo, std::min(hi, base_items_)));
  }
  std::size_t next_row = 0;
  for (std::size_t ordinal = lo; ordinal < hi; ++ordinal) {
    if (next_row < rows.size() && rows[next_row].ordinal == ordinal) {
      AS_ASSIGN_OR_RETURN(std::optional<ItemSpan> span, Clipped(rows[next_row++]));
      if (!span)
        return Error(ErrorCode::kCorruption,
                     "timeline item " + std::to_string(ordinal) + " starts after the index's tail");
      out.push_back(std::move(*span));
    } else if (ordinal < base_items_ && ordinal - lo < from_base.size()) {
      out.push_back(std::move(from_base[ordinal - lo]));
    } else {
      return Error(ErrorCode::kCorruption, "the timeline index of " + session_.str() +
                                               " lacks item " + std::to_string(ordinal));
    }
  }
  return out;
}

Result<std::size_t> DurableIndexView::FirstStartingAfter(Seq seq) {
  if (base_ && seq <= base_seq_) return base_->FirstStartingAfter(seq);
  AS_ASSIGN_OR_RETURN(std::optional<std::uint64_t> first,
                      store_.FirstOrdinalStartingAfter(session_, epoch_, seq));
  return first ? std::min<std::size_t>(static_cast<std::size_t>(*first), size_) : size_;
}

Result<std::vector<timeline::IndexView::Numbered>> DurableIndexView::EndingAfter(std::size_t limit,
                                                                                 Seq seq) {
  limit = std::min(limit, size_);
  std::map<std::size_t, ItemSpan> found;
  AS_ASSIGN_OR_RETURN(std::vector<ItemRow> rows, store_.ItemsOpenAcross(session_, epoch_, seq));
  for (const ItemRow& row : rows) {
    if (row.ordinal >= limit) continue;
    AS_ASSIGN_OR_RETURN(std::optional<ItemSpan> span, Clipped(row));
    if (span && span->seq_end > seq) found.emplace(static_cast<std::size_t>(row.ordinal), *span);
  }
  // A base item this epoch extended has a row of its own, found above (it is open across `seq`
  // whenever the base's is).
  if (base_ && seq < base_seq_) {
    AS_ASSIGN_OR_RETURN(std::vector<Numbered> inherited,
                        base_->EndingAfter(std::min(limit, base_items_), seq));
    for (auto& [ordinal, span] : inherited) found.emplace(ordinal, std::move(span));
  }
  std::vector<Numbered> out;
  out.reserve(found.size());
  for (auto& [ordinal, span] : found) out.emplace_back(ordinal, std::move(span));
  return out;
}

Result<std::vector<timeline::IndexView::Numbered>> DurableIndexView::ByKeys(
    const std::vector<std::string>& keys) {
  std::vector<Numbered> out;
  if (keys.empty()) return out;
  AS_ASSIGN_OR_RETURN(std::vector<ItemRow> rows, store_.ItemsByKeys(session_, epoch_, keys));
  std::unordered_set<std::string> seen;
  for (const ItemRow& row : rows) {
    if (row.ordinal >= size_) continue;
    AS_ASSIGN_OR_RETURN(std::optional<ItemSpan> span, Clipped(row));
    if (!span) continue;
    seen.insert(span->key);
    out.emplace_back(static_cast<std::size_t>(row.ordinal), std::move(*span));
  }
  if (base_) {
    std::vector<std::string> rest;
    for (const std::string& key : keys)
      if (!seen.count(key)) rest.push_back(key);
    AS_ASSIGN_OR_RETURN(std::vector<Numbered> inherited, base_->ByKeys(rest));
    for (auto& entry : inherited) out.push_back(std::move(entry));
  }
  return out;
}

namespace {

// The state of (session, epoch) in kItemIndexFormat, created (empty, over its base) when none is
// stored. A state of another format is dropped first.
Result<ItemIndexState> StartState(ItemIndexStore& store, EventLog& log, const SessionId& session,
                                  Epoch epoch, std::size_t* events_read) {
  while (true) {
    AS_ASSIGN_OR_RETURN(std::optional<ItemIndexState> state, store.LoadItemState(session, epoch));
    if (state && state->format == kItemIndexFormat) return *state;
    if (state) {
      AS_RETURN_IF_ERROR(store.DropItems(session, epoch));
      continue;
    }
    AS_ASSIGN_OR_RETURN(std::optional<HistoryBase> base, store.EpochBase(session, epoch));
    ItemIndexState fresh{kItemIndexFormat, Seq(0), 0, 0};
    if (base) {
      AS_RETURN_IF_ERROR(
          CatchUpIndex(store, log, base->session, base->epoch, base->seq, events_read));
      AS_ASSIGN_OR_RETURN(auto base_view,
                          DurableIndexView::Open(store, base->session, base->epoch, base->seq));
      fresh.watermark = base->seq;
      fresh.items = fresh.base_items = base_view->size();
    }
    Status created = store.CommitItems({session, epoch, std::nullopt, fresh, {}});
    if (created.ok()) return fresh;
    if (created.code() != ErrorCode::kConflict) return created;
  }
}

// Indexes the events `events` (ascending, after state.watermark) into `next` and the rows they
// changed.
Status IndexBatch(DurableIndexView& view, const std::vector<Event>& events, ItemIndexState& next,
                  std::vector<ItemRow>& rows) {
  // Every merging item the batch touches, looked up once: the batch's own, then the stored ones.
  std::vector<std::string> keys;
  std::unordered_set<std::string> asked;
  for (const Event& event : events) {
    std::optional<timeline::ItemKey> key = timeline::ItemKeyOf(event);
    if (key && key->key.front() != '#' && asked.insert(key->key).second) keys.push_back(key->key);
  }
  AS_ASSIGN_OR_RETURN(std::vector<timeline::IndexView::Numbered> known, view.ByKeys(keys));
  std::unordered_map<std::string, std::size_t> by_key;
  std::map<std::size_t, ItemSpan> touched;
  for (auto& [ordinal, span] : known) {
    by_key.emplace(span.key, ordinal);
    touched.emplace(ordinal, std::move(span));
  }
  std::unordered_set<std::size_t> changed;
  for (const Event& event : events) {
    next.watermark = event.seq;
    std::optional<timeline::ItemKey> key = timeline::ItemKeyOf(event);
    if (!key) continue;
    const bool merges = key->key.front() != '#';
    if (merges) {
      if (auto it = by_key.find(key->key); it != by_key.end()) {
        ItemSpan& span = touched.at(it->second);
        timeline::AddToRanges(span.ranges, event.seq);
        span.seq_end = event.seq;
        changed.insert(it->second);
        continue;
      }
    }
    const auto ordinal = static_cast<std::size_t>(next.items++);
    if (merges) by_key.emplace(key->key, ordinal);
    touched.emplace(ordinal,
                    ItemSpan{key->kind, key->key, event.seq, event.seq, {{event.seq, event.seq}}});
    changed.insert(ordinal);
  }
  for (const auto& [ordinal, span] : touched)
    if (changed.count(ordinal)) rows.push_back(RowOf(ordinal, span));
  return Status::Ok();
}

}  // namespace

Status CatchUpIndex(ItemIndexStore& store, EventLog& log, const SessionId& session, Epoch epoch,
                    Seq target, std::size_t* events_read, const std::atomic<bool>* cancel,
                    const HeldRecords* held, std::vector<ItemCommit>* deferred) {
  AS_ASSIGN_OR_RETURN(ItemIndexState state, StartState(store, log, session, epoch, events_read));
  while (state.watermark < target) {
    if (cancel != nullptr && cancel->load())
      return Error(ErrorCode::kUnavailable, "indexing " + session.str() + " was stopped");
    ReadRequest request;
    request.session = session;
    request.epoch = epoch;
    request.from = state.watermark.next();
    request.max_items =
        std::min<std::uint64_t>(kIndexBatchEvents, target.value() - state.watermark.value());
    AS_ASSIGN_OR_RETURN(std::vector<EventRecord> records, ReadForward(log, held, request));
    if (records.empty()) return Status::Ok();
    std::vector<Event> events;
    for (const EventRecord& record : records) {
      if (record.seq > target) break;
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      events.push_back(std::move(event));
    }
    if (events_read) *events_read += events.size();
    AS_ASSIGN_OR_RETURN(auto view, DurableIndexView::OpenAt(store, session, epoch, state));
    ItemIndexState next = state;
    std::vector<ItemRow> rows;
    AS_RETURN_IF_ERROR(IndexBatch(*view, events, next, rows));
    ItemCommit commit{session, epoch, state, next, std::move(rows)};
    if (deferred != nullptr && next.watermark >= target) {
      deferred->push_back(std::move(commit));
      return Status::Ok();
    }
    Status committed = store.CommitItems(std::move(commit));
    if (!committed.ok() && committed.code() != ErrorCode::kConflict) return committed;
    // Moved on by another indexer: continue from what it stored.
    if (!committed.ok()) {
      AS_ASSIGN_OR_RETURN(state, StartState(store, log, session, epoch, events_read));
    } else {
      state = next;
    }
  }
  return Status::Ok();
}

}  // namespace agentstream

#include "search/indexer.h"

#include <boost/json/serialize.hpp>
#include <map>
#include <optional>

#include "core/event_codec.h"
#include "core/utf8.h"

namespace agentstream {

namespace {

// Text as a document holds it: control characters but tab and newline are spaces (the stores'
// snippets mark matches with two of them), cut to kMaxDocumentBytes.
void AppendText(std::string& doc, std::string_view text) {
  if (doc.size() >= kMaxDocumentBytes) return;
  std::string clean(text.substr(0, kMaxDocumentBytes - doc.size() + 4));
  for (char& c : clean) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7f) c = ' ';
  }
  doc += clean;
  if (doc.size() > kMaxDocumentBytes) doc = BoundUtf8(doc, kMaxDocumentBytes).text;
}

// A text still being streamed: its first event and what it holds so far.
struct Open {
  Cursor start;
  TimestampMs time = 0;
  std::string kind;
  std::string text;
};

class Builder {
 public:
  void Add(const Event& e) {
    std::visit(
        [&](const auto& p) {
          using T = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<T, UserMessage>) {
            Whole(e, "user.message", p.text);
          } else if constexpr (std::is_same_v<T, AssistantMessageDelta>) {
            Stream(messages_, p.message_id.str(), e, "assistant.message", p.text);
          } else if constexpr (std::is_same_v<T, AssistantMessageEnd>) {
            Finish(messages_, p.message_id.str());
          } else if constexpr (std::is_same_v<T, ToolCallStart>) {
            std::string text = p.title.value_or("");
            text += (text.empty() ? "" : "\n") + p.name;
            if (!p.input.is_null()) text += "\n" + boost::json::serialize(p.input);
            Whole(e, "tool.call", text);
          } else if constexpr (std::is_same_v<T, ToolCallOutput>) {
            Stream(outputs_, p.call_id.str(), e, "tool.output", p.text);
          } else if constexpr (std::is_same_v<T, ToolCallEnd>) {
            Finish(outputs_, p.call_id.str());
            std::string text = p.output.value_or("");
            if (p.error) text += (text.empty() ? "" : "\n") + *p.error;
            Whole(e, "tool.output", text);
          }
        },
        e.payload);
  }

  // The first event of a text still streaming, nullopt when none is.
  std::optional<Seq> FirstOpen() const {
    std::optional<Seq> first;
    for (const auto* open : {&messages_, &outputs_})
      for (const auto& [key, o] : *open)
        if (!first || o.start.seq < *first) first = o.start.seq;
    return first;
  }

  // Every document, the streaming ones as they are so far, in the order their texts began.
  std::vector<SearchDocument> Take() {
    for (auto* open : {&messages_, &outputs_}) {
      for (auto& [key, o] : *open) Emit(std::move(o));
      open->clear();
    }
    std::stable_sort(done_.begin(), done_.end(),
                     [](const auto& a, const auto& b) { return a.cursor.seq < b.cursor.seq; });
    return std::move(done_);
  }

 private:
  void Whole(const Event& e, const char* kind, std::string_view text) {
    Open o{e.cursor(), e.time, kind, {}};
    AppendText(o.text, text);
    Emit(std::move(o));
  }
  void Stream(std::map<std::string, Open>& open, const std::string& key, const Event& e,
              const char* kind, std::string_view text) {
    auto [it, fresh] = open.try_emplace(key, Open{e.cursor(), e.time, kind, {}});
    AppendText(it->second.text, text);
  }
  void Finish(std::map<std::string, Open>& open, const std::string& key) {
    auto it = open.find(key);
    if (it == open.end()) return;
    Emit(std::move(it->second));
    open.erase(it);
  }
  void Emit(Open o) {
    if (o.text.find_first_not_of(" \t\n") == std::string::npos) return;
    done_.push_back(SearchDocument{o.start, o.time, std::move(o.kind), std::move(o.text)});
  }

  std::map<std::string, Open> messages_;  // by message id
  std::map<std::string, Open> outputs_;   // by tool call id
  std::vector<SearchDocument> done_;
};

}  // namespace

DocumentBatch DocumentsOf(const std::vector<Event>& events) {
  Builder all;
  for (const Event& e : events) all.Add(e);
  const std::optional<Seq> open = all.FirstOpen();
  if (!open || *open <= events.front().seq) return {all.Take(), events.back().seq};
  // A text still streaming is left whole for the next batch, with every event from its first.
  Builder before;
  for (const Event& e : events)
    if (e.seq < *open) before.Add(e);
  return {before.Take(), Seq(open->value() - 1)};
}

Status CatchUpSearch(SearchIndexStore& store, EventLog& log, const SessionId& session, Cursor tail,
                     const std::atomic<bool>* cancel, const HeldRecords* held,
                     std::vector<DocumentCommit>* deferred) {
  // Where the epoch's own events begin: after the prefix a fork or a rewind continues.
  auto start = [&]() -> Result<Cursor> {
    std::optional<HistoryBase> base;
    if (ItemIndexStore* items = log.item_index()) {
      AS_ASSIGN_OR_RETURN(base, items->EpochBase(session, tail.epoch));
    }
    return Cursor{tail.epoch, base ? base->seq : Seq(0)};
  };
  AS_ASSIGN_OR_RETURN(std::optional<Cursor> state, store.LoadSearchState(session));
  while (true) {
    Cursor at;
    if (state && state->epoch == tail.epoch) {
      at = *state;
    } else if (state && state->epoch > tail.epoch) {
      return Status::Ok();  // indexed by someone who saw a newer epoch
    } else {
      AS_ASSIGN_OR_RETURN(at, start());
    }
    if (at.seq >= tail.seq) return Status::Ok();
    if (cancel != nullptr && cancel->load())
      return Error(ErrorCode::kUnavailable, "indexing " + session.str() + " was stopped");
    ReadRequest request;
    request.session = session;
    request.epoch = tail.epoch;
    request.from = at.seq.next();
    request.max_items =
        std::min<std::uint64_t>(kSearchBatchEvents, tail.seq.value() - at.seq.value());
    AS_ASSIGN_OR_RETURN(std::vector<EventRecord> records, ReadForward(log, held, request));
    std::vector<Event> events;
    for (const EventRecord& record : records) {
      if (record.seq > tail.seq) break;
      AS_ASSIGN_OR_RETURN(Event event, DecodeRecord(record));
      events.push_back(std::move(event));
    }
    if (events.empty()) return Status::Ok();
    DocumentBatch batch = DocumentsOf(events);
    const Cursor next{tail.epoch, batch.through};
    DocumentCommit commit{session, state, next, std::move(batch.documents)};
    if (deferred != nullptr && events.back().seq >= tail.seq) {
      deferred->push_back(std::move(commit));
      return Status::Ok();
    }
    Status committed = store.CommitDocuments(std::move(commit));
    if (!committed.ok() && committed.code() != ErrorCode::kConflict) return committed;
    if (committed.ok()) {
      state = next;
      // A text still streaming at the tail waits for its end (or for a batch it begins).
      if (batch.through < events.back().seq && events.back().seq >= tail.seq) return Status::Ok();
    } else {
      // Moved on by another indexer: continue from what it stored.
      AS_ASSIGN_OR_RETURN(state, store.LoadSearchState(session));
    }
  }
}

}  // namespace agentstream

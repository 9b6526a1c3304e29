#include "streams/stream_store.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <utility>

#include "streams/json_mode.h"

namespace agentstream::streams {

std::string NormalizeContentType(std::string_view content_type) {
  const std::size_t semi = content_type.find(';');
  std::string_view type = content_type.substr(0, semi);
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.front())))
    type.remove_prefix(1);
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.back())))
    type.remove_suffix(1);
  std::string out(type);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

namespace {

bool IsJson(const std::string& content_type) {
  return NormalizeContentType(content_type) == "application/json";
}

OpResult WithCode(Code code) {
  OpResult r;
  r.code = code;
  return r;
}

}  // namespace

StreamStore::StreamStore(StreamLimits limits, std::unique_ptr<StreamJournal> journal, Clock clock)
    : limits_(limits), journal_(std::move(journal)), clock_(std::move(clock)) {}

StreamStore::~StreamStore() {
  // The journal's thread runs Changed callbacks that use this store: stop it first.
  journal_.reset();
}

Result<std::unique_ptr<StreamStore>> StreamStore::Open(const std::string& db_path,
                                                       StreamLimits limits) {
  AS_ASSIGN_OR_RETURN(auto journal, StreamJournal::Open(db_path, limits.max_pending_writes));
  AS_ASSIGN_OR_RETURN(std::vector<Stream> loaded, journal->Load());
  AS_ASSIGN_OR_RETURN(auto state, journal->LoadState());
  journal->FinishedLoading();
  const std::int64_t min_next_id = journal->min_next_id();
  auto store = std::make_unique<StreamStore>(limits, std::move(journal));
  store->next_id_ = min_next_id;
  store->state_ = std::move(state);
  const std::int64_t now = store->Now();
  for (Stream& s : loaded) {
    store->next_id_ = std::max(store->next_id_, s.meta.id + 1);
    store->total_bytes_ += s.bytes;
    s.last_access_ms = now;  // sliding TTLs restart with the daemon
    std::string path = s.meta.path;
    store->streams_.emplace(std::move(path), std::move(s));
  }
  for (auto& [path, s] : store->streams_) {
    if (!s.meta.forked_from) continue;
    auto source = store->streams_.find(*s.meta.forked_from);
    if (source != store->streams_.end()) ++source->second.ref_count;
  }
  return store;
}

std::int64_t StreamStore::Now() const {
  if (clock_) return clock_();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool StreamStore::Expired(const Stream& s, std::int64_t now) const {
  if (s.meta.expires_at && now >= s.meta.expires_at_ms) return true;
  return s.meta.ttl_seconds && now >= s.last_access_ms + *s.meta.ttl_seconds * 1000;
}

Stream* StreamStore::Lookup(const std::string& path, std::int64_t now) {
  auto it = streams_.find(path);
  if (it == streams_.end()) return nullptr;
  Stream& s = it->second;
  if (!s.meta.soft_deleted && Expired(s, now)) {
    if (s.ref_count == 0) {
      Remove(path);
      return nullptr;
    }
    s.meta.soft_deleted = true;
    Persist(s);
    Changed(path);
  }
  return &s;
}

void StreamStore::Remove(const std::string& path) {
  auto it = streams_.find(path);
  if (it == streams_.end()) return;
  std::optional<std::string> parent = it->second.meta.forked_from;
  total_bytes_ -= it->second.bytes;
  if (journal_) journal_->DeleteStream(it->second.meta.id);
  streams_.erase(it);
  Changed(path);
  if (!parent) return;
  auto p = streams_.find(*parent);
  if (p == streams_.end()) return;
  p->second.ref_count = std::max(0, p->second.ref_count - 1);
  if (p->second.ref_count == 0 && p->second.meta.soft_deleted) Remove(*parent);
}

void StreamStore::Persist(const Stream& s) {
  if (journal_) journal_->PutMeta(s.meta);
}

void StreamStore::Changed(const std::string& path) {
  auto notify = [this, path](bool) {
    std::vector<std::function<void()>> fns;
    {
      std::lock_guard lock(watch_mu_);
      if (hook_) hook_(path);
      auto it = watchers_.find(path);
      if (it == watchers_.end()) return;
      for (const auto& [id, fn] : it->second) fns.push_back(fn);
    }
    for (const auto& fn : fns) fn();
  };
  if (journal_) {
    journal_->AfterCommit(std::move(notify));
  } else {
    notify(true);
  }
}

StreamInfo StreamStore::Info(const Stream& s) {
  return StreamInfo{s.meta.content_type, s.tail, s.meta.closed, s.meta.ttl_seconds,
                    s.meta.expires_at};
}

Message StreamStore::AppendData(Stream& s, std::string data) {
  Message m{Advance(s.tail, data.size()), std::make_shared<const std::string>(std::move(data))};
  s.tail = m.offset;
  s.bytes += m.data->size();
  total_bytes_ += m.data->size();
  s.messages.push_back(m);
  if (journal_) journal_->PutMessage(s.meta.id, m);
  return m;
}

void StreamStore::Collect(const Stream& s, std::optional<Offset> after, Offset cap, ReadResult* out,
                          std::size_t* bytes) const {
  if (s.meta.forked_from && (!after || *after < s.meta.fork_offset)) {
    auto source = streams_.find(*s.meta.forked_from);
    if (source != streams_.end())
      Collect(source->second, after, std::min(cap, s.meta.fork_offset), out, bytes);
  }
  auto it = s.messages.begin();
  if (after) {
    it = std::upper_bound(s.messages.begin(), s.messages.end(), *after,
                          [](const Offset& o, const Message& m) { return o < m.offset; });
  }
  for (; it != s.messages.end() && it->offset <= cap; ++it) {
    if (!out->up_to_date) return;
    if (*bytes >= limits_.max_read_bytes && !out->messages.empty()) {
      out->up_to_date = false;
      return;
    }
    *bytes += it->data->size();
    out->messages.push_back(*it);
  }
}

OpResult StreamStore::Validate(Stream& s, const ProducerArgs& p, std::int64_t now) const {
  std::erase_if(s.meta.producers, [&](const auto& entry) {
    return now - entry.second.updated_ms > limits_.producer_state_ttl_ms;
  });
  OpResult r;
  auto it = s.meta.producers.find(p.id);
  if (it == s.meta.producers.end()) {
    if (s.meta.producers.size() >= limits_.max_producers) return WithCode(Code::kFull);
    if (p.seq != 0) {
      r.code = Code::kSequenceGap;
      r.expected_seq = 0;
      r.received_seq = p.seq;
    }
    return r;
  }
  const ProducerState& state = it->second;
  if (p.epoch < state.epoch) {
    r.code = Code::kStaleEpoch;
    r.current_epoch = state.epoch;
  } else if (p.epoch > state.epoch) {
    if (p.seq != 0) r.code = Code::kInvalidEpochSeq;
  } else if (p.seq <= state.last_seq) {
    r.code = Code::kDuplicate;
    r.producer_seq = state.last_seq;
  } else if (p.seq != state.last_seq + 1) {
    r.code = Code::kSequenceGap;
    r.expected_seq = state.last_seq + 1;
    r.received_seq = p.seq;
  }
  return r;
}

OpResult StreamStore::Create(const CreateArgs& args) {
  std::lock_guard lock(mu_);
  if (journal_ && journal_->failed()) return WithCode(Code::kUnavailable);
  const std::int64_t now = Now();
  if (auto it = streams_.find(args.path); it != streams_.end()) {
    Stream* existing = Lookup(args.path, now);
    if (existing != nullptr && existing->meta.soft_deleted) return WithCode(Code::kHasForks);
    if (existing != nullptr) {
      const StreamMeta& m = existing->meta;
      auto type_or_default = [](const std::string& t) {
        std::string n = NormalizeContentType(t);
        return n.empty() ? std::string("application/octet-stream") : n;
      };
      const bool same = type_or_default(args.content_type) == type_or_default(m.content_type) &&
                        args.ttl_seconds == m.ttl_seconds && args.expires_at == m.expires_at &&
                        args.closed == m.closed && args.forked_from == m.forked_from &&
                        (!args.fork_offset || *args.fork_offset == m.fork_offset) &&
                        args.fork_sub_offset.value_or(0) == m.fork_sub_offset;
      OpResult r = WithCode(same ? Code::kOk : Code::kConfigConflict);
      r.info = Info(*existing);
      return r;
    }
  }
  if (streams_.size() >= limits_.max_streams ||
      total_bytes_ + args.body.size() > limits_.max_total_bytes)
    return WithCode(Code::kFull);

  Stream s;
  s.meta.path = args.path;
  s.meta.content_type = args.content_type;
  s.meta.ttl_seconds = args.ttl_seconds;
  s.meta.expires_at = args.expires_at;
  s.meta.expires_at_ms = args.expires_at_ms;
  s.meta.created_ms = now;
  s.last_access_ms = now;
  std::string prefix;
  Stream* source = nullptr;
  if (args.forked_from) {
    auto src = streams_.find(*args.forked_from);
    if (src == streams_.end()) return WithCode(Code::kSourceNotFound);
    source = &src->second;
    if (source->meta.soft_deleted) return WithCode(Code::kSourceGone);
    if (Expired(*source, now)) return WithCode(Code::kSourceNotFound);
    if (!args.content_type.empty() &&
        NormalizeContentType(args.content_type) != NormalizeContentType(source->meta.content_type))
      return WithCode(Code::kForkTypeMismatch);
    const Offset fork_offset = args.fork_offset.value_or(source->tail);
    if (source->tail < fork_offset) return WithCode(Code::kBadForkOffset);
    if (args.fork_sub_offset.value_or(0) > 0) {
      ReadResult after;
      std::size_t bytes = 0;
      Collect(*source, fork_offset, source->tail, &after, &bytes);
      if (after.messages.empty()) return WithCode(Code::kBadSubOffset);
      const std::string& first = *after.messages.front().data;
      if (IsJson(source->meta.content_type)) {
        auto p = JsonPrefix(first, *args.fork_sub_offset);
        if (!p.ok()) return WithCode(Code::kBadSubOffset);
        prefix = std::move(*p);
      } else {
        if (*args.fork_sub_offset > first.size()) return WithCode(Code::kBadSubOffset);
        prefix = first.substr(0, *args.fork_sub_offset);
      }
      s.meta.fork_sub_offset = *args.fork_sub_offset;
    }
    if (s.meta.content_type.empty()) s.meta.content_type = source->meta.content_type;
    if (!s.meta.ttl_seconds && !s.meta.expires_at) {
      s.meta.ttl_seconds = source->meta.ttl_seconds;
      if (!s.meta.ttl_seconds) {
        s.meta.expires_at = source->meta.expires_at;
        s.meta.expires_at_ms = source->meta.expires_at_ms;
      }
    }
    s.meta.forked_from = args.forked_from;
    s.meta.fork_offset = fork_offset;
    s.tail = fork_offset;
  }
  std::string initial = args.body;
  if (!initial.empty() && IsJson(s.meta.content_type)) {
    auto processed = ProcessJsonAppend(initial, /*initial_create=*/true);
    if (!processed.ok()) return WithCode(Code::kInvalidJson);
    initial = std::move(*processed);
  }
  s.meta.id = next_id_++;
  s.meta.closed = args.closed;
  if (source != nullptr) ++source->ref_count;
  Persist(s);
  if (!prefix.empty()) AppendData(s, std::move(prefix));
  if (!initial.empty()) AppendData(s, std::move(initial));
  OpResult r = WithCode(Code::kCreated);
  r.info = Info(s);
  r.offset = s.tail;
  streams_.emplace(args.path, std::move(s));
  Changed(args.path);
  return r;
}

OpResult StreamStore::Append(const AppendArgs& args) {
  std::lock_guard lock(mu_);
  if (journal_ && journal_->failed()) return WithCode(Code::kUnavailable);
  if (journal_ && journal_->Full()) return WithCode(Code::kFull);
  const std::int64_t now = Now();
  Stream* s = Lookup(args.path, now);
  if (s == nullptr) return WithCode(Code::kNotFound);
  if (s->meta.soft_deleted) return WithCode(Code::kGone);
  s->last_access_ms = now;
  auto closed_by_this = [&] {
    const auto& by = s->meta.closed_by;
    return args.producer && by && by->producer == args.producer->id &&
           by->epoch == args.producer->epoch && by->seq == args.producer->seq;
  };
  OpResult r;
  const bool close_only = args.body.empty() && args.close;
  if (s->meta.closed && close_only && !args.producer) {
    r.info = Info(*s);
    return r;  // closing is idempotent
  }
  if (s->meta.closed) {
    r.code = closed_by_this() ? Code::kDuplicate : Code::kClosed;
    if (args.producer) r.producer_seq = args.producer->seq;
    r.info = Info(*s);
    return r;
  }
  if (!close_only && !args.content_type.empty() &&
      NormalizeContentType(args.content_type) != NormalizeContentType(s->meta.content_type)) {
    r.code = Code::kTypeMismatch;
    return r;
  }
  if (args.producer) {
    r = Validate(*s, *args.producer, now);
    if (r.code != Code::kOk) {
      r.info = Info(*s);
      return r;
    }
  }
  if (!close_only) {
    if (args.stream_seq && s->meta.last_stream_seq && *args.stream_seq <= *s->meta.last_stream_seq)
      return WithCode(Code::kSeqConflict);
    std::string data = args.body;
    if (IsJson(s->meta.content_type)) {
      auto processed = ProcessJsonAppend(data, /*initial_create=*/false);
      if (!processed.ok())
        return WithCode(processed.status().message() == "invalid JSON" ? Code::kInvalidJson
                                                                       : Code::kEmptyArray);
      data = std::move(*processed);
    }
    if (total_bytes_ + data.size() > limits_.max_total_bytes) return WithCode(Code::kFull);
    AppendData(*s, std::move(data));
    if (args.stream_seq) s->meta.last_stream_seq = args.stream_seq;
  }
  if (args.producer) {
    s->meta.producers[args.producer->id] =
        ProducerState{args.producer->epoch, args.producer->seq, now};
  }
  if (args.close) {
    s->meta.closed = true;
    if (args.producer)
      s->meta.closed_by = ClosedBy{args.producer->id, args.producer->epoch, args.producer->seq};
  }
  if (args.producer || args.stream_seq || args.close) Persist(*s);
  Changed(args.path);
  r.code = Code::kOk;
  r.info = Info(*s);
  r.offset = s->tail;
  return r;
}

OpResult StreamStore::Delete(const std::string& path) {
  std::lock_guard lock(mu_);
  if (journal_ && journal_->failed()) return WithCode(Code::kUnavailable);
  Stream* s = Lookup(path, Now());
  if (s == nullptr) return WithCode(Code::kNotFound);
  if (s->meta.soft_deleted) return WithCode(Code::kGone);
  if (s->ref_count > 0) {
    s->meta.soft_deleted = true;
    Persist(*s);
    Changed(path);
  } else {
    Remove(path);
  }
  return WithCode(Code::kOk);
}

OpResult StreamStore::Head(const std::string& path, bool touch) {
  std::lock_guard lock(mu_);
  const std::int64_t now = Now();
  Stream* s = Lookup(path, now);
  if (s == nullptr) return WithCode(Code::kNotFound);
  if (s->meta.soft_deleted) return WithCode(Code::kGone);
  if (touch) s->last_access_ms = now;
  OpResult r;
  r.info = Info(*s);
  return r;
}

ReadResult StreamStore::Read(const std::string& path, std::optional<Offset> after) {
  std::lock_guard lock(mu_);
  ReadResult out;
  const std::int64_t now = Now();
  Stream* s = Lookup(path, now);
  if (s == nullptr) {
    out.code = Code::kNotFound;
    return out;
  }
  if (s->meta.soft_deleted) {
    out.code = Code::kGone;
    return out;
  }
  s->last_access_ms = now;
  std::size_t bytes = 0;
  Collect(*s, after, s->tail, &out, &bytes);
  out.info = Info(*s);
  out.json = IsJson(s->meta.content_type);
  return out;
}

void StreamStore::SetChangeHook(std::function<void(const std::string&)> hook) {
  std::lock_guard lock(watch_mu_);
  hook_ = std::move(hook);
}

std::vector<std::string> StreamStore::Paths() {
  std::lock_guard lock(mu_);
  std::vector<std::string> paths;
  paths.reserve(streams_.size());
  for (const auto& [path, s] : streams_) paths.push_back(path);
  return paths;
}

void StreamStore::PutState(const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  if (value.empty()) {
    state_.erase(key);
  } else {
    state_[key] = value;
  }
  if (journal_) journal_->PutState(key, value);
}

std::map<std::string, std::string> StreamStore::State(const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> out;
  for (auto it = state_.lower_bound(prefix); it != state_.end() && it->first.rfind(prefix, 0) == 0;
       ++it)
    out.insert(*it);
  return out;
}

void StreamStore::WhenDurable(std::function<void(bool ok)> fn) {
  if (journal_) {
    journal_->AfterCommit(std::move(fn));
  } else {
    fn(true);
  }
}

std::uint64_t StreamStore::Watch(const std::string& path, std::function<void()> fn) {
  std::lock_guard lock(watch_mu_);
  if (watcher_count_ >= limits_.max_watchers) return 0;
  const std::uint64_t id = next_watch_++;
  watchers_[path].emplace(id, std::move(fn));
  ++watcher_count_;
  return id;
}

void StreamStore::Unwatch(const std::string& path, std::uint64_t id) {
  std::lock_guard lock(watch_mu_);
  auto it = watchers_.find(path);
  if (it == watchers_.end()) return;
  if (it->second.erase(id) > 0) --watcher_count_;
  if (it->second.empty()) watchers_.erase(it);
}

}  // namespace agentstream::streams

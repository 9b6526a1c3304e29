#include "streams/memory_stream_store.h"

#include <algorithm>
#include <utility>

#include "streams/stream_rules.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

MemoryStreamStore::MemoryStreamStore(StreamLimits limits, std::unique_ptr<StreamJournal> journal,
                                     Clock clock)
    : limits_(limits),
      journal_(std::move(journal)),
      clock_(std::move(clock)),
      watchers_(limits.max_watchers) {}

MemoryStreamStore::~MemoryStreamStore() {
  // The journal's thread runs Changed callbacks that use this store: stop it first.
  journal_.reset();
}

Result<std::unique_ptr<MemoryStreamStore>> MemoryStreamStore::Open(const std::string& db_path,
                                                                   StreamLimits limits) {
  AS_ASSIGN_OR_RETURN(auto journal, StreamJournal::Open(db_path, limits.max_pending_writes));
  AS_ASSIGN_OR_RETURN(std::vector<Stream> loaded, journal->Load());
  AS_ASSIGN_OR_RETURN(auto state, journal->LoadState());
  journal->FinishedLoading();
  const std::int64_t min_next_id = journal->min_next_id();
  auto store = std::make_unique<MemoryStreamStore>(limits, std::move(journal));
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

std::int64_t MemoryStreamStore::Now() const { return system::Now(clock_); }

Stream* MemoryStreamStore::Lookup(const std::string& path, std::int64_t now) {
  auto it = streams_.find(path);
  if (it == streams_.end()) return nullptr;
  Stream& s = it->second;
  if (!s.meta.soft_deleted && Expired(s.meta, s.last_access_ms, now)) {
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

void MemoryStreamStore::Remove(const std::string& path) {
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

void MemoryStreamStore::Persist(const Stream& s) {
  if (journal_) journal_->PutMeta(s.meta);
}

void MemoryStreamStore::Changed(const std::string& path) {
  auto notify = [this, path](bool) { watchers_.Changed(path); };
  if (journal_) {
    journal_->AfterCommit(std::move(notify));
  } else {
    notify(true);
  }
}

Message MemoryStreamStore::AppendData(Stream& s, std::string data) {
  Message m{Advance(s.tail, data.size()), std::make_shared<const std::string>(std::move(data))};
  s.tail = m.offset;
  s.bytes += m.data->size();
  total_bytes_ += m.data->size();
  s.messages.push_back(m);
  if (journal_) journal_->PutMessage(s.meta.id, m);
  return m;
}

void MemoryStreamStore::Collect(const Stream& s, std::optional<Offset> after, Offset cap,
                                ReadResult* out, std::size_t* bytes) const {
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

void MemoryStreamStore::CreateAsync(CreateArgs args, Done done) { done(DoCreate(args)); }
void MemoryStreamStore::AppendAsync(AppendArgs args, Done done) { done(DoAppend(args)); }
void MemoryStreamStore::DeleteAsync(std::string path, Done done) { done(DoDelete(path)); }

OpResult MemoryStreamStore::DoCreate(const CreateArgs& args) {
  std::lock_guard lock(mu_);
  if (journal_ && journal_->failed()) return WithCode(Code::kUnavailable);
  const std::int64_t now = Now();
  if (ExpiresBeforeCreation(args, now)) return WithCode(Code::kExpiresInPast);
  if (auto it = streams_.find(args.path); it != streams_.end()) {
    Stream* existing = Lookup(args.path, now);
    if (existing != nullptr && existing->meta.soft_deleted) return WithCode(Code::kHasForks);
    if (existing != nullptr) {
      OpResult r = WithCode(SameConfig(args, existing->meta) ? Code::kOk : Code::kConfigConflict);
      r.info = InfoOf(existing->meta, existing->tail);
      return r;
    }
  }
  if (streams_.size() >= limits_.max_streams ||
      total_bytes_ + args.body.size() > limits_.max_total_bytes)
    return WithCode(Code::kFull);

  Stream* source = nullptr;
  std::optional<ForkSource> fork;
  if (args.forked_from) {
    auto src = streams_.find(*args.forked_from);
    if (src == streams_.end()) return WithCode(Code::kSourceNotFound);
    source = &src->second;
    if (source->meta.soft_deleted) return WithCode(Code::kSourceGone);
    if (Expired(source->meta, source->last_access_ms, now)) return WithCode(Code::kSourceNotFound);
    fork = ForkSource{&source->meta, source->tail, [&](Offset offset) {
                        ReadResult after;
                        std::size_t bytes = 0;
                        Collect(*source, offset, source->tail, &after, &bytes);
                        if (after.messages.empty()) return std::optional<std::string>();
                        return std::optional<std::string>(*after.messages.front().data);
                      }};
  }
  NewStream plan = PlanCreate(args, fork ? &*fork : nullptr);
  if (plan.code != Code::kCreated) return WithCode(plan.code);
  Stream s;
  s.meta = std::move(plan.meta);
  s.meta.created_ms = now;
  s.last_access_ms = now;
  s.tail = plan.tail;
  s.meta.id = next_id_++;
  s.meta.closed = args.closed;
  if (source != nullptr) ++source->ref_count;
  Persist(s);
  if (!plan.prefix.empty()) AppendData(s, std::move(plan.prefix));
  if (!plan.initial.empty()) AppendData(s, std::move(plan.initial));
  OpResult r = WithCode(Code::kCreated);
  r.info = InfoOf(s.meta, s.tail);
  r.offset = s.tail;
  streams_.emplace(args.path, std::move(s));
  Changed(args.path);
  return r;
}

OpResult MemoryStreamStore::DoAppend(const AppendArgs& args) {
  std::lock_guard lock(mu_);
  if (journal_ && journal_->failed()) return WithCode(Code::kUnavailable);
  if (journal_ && journal_->Full()) return WithCode(Code::kFull);
  const std::int64_t now = Now();
  Stream* s = Lookup(args.path, now);
  if (s == nullptr) return WithCode(Code::kNotFound);
  if (s->meta.soft_deleted) return WithCode(Code::kGone);
  s->last_access_ms = now;
  AppendPlan plan = PlanAppend(s->meta, args, now, limits_);
  OpResult r = plan.result;
  if (plan.idempotent_close || r.code != Code::kOk) {
    r.info = InfoOf(s->meta, s->tail);
    return r;
  }
  if (plan.data) {
    if (total_bytes_ + plan.data->size() > limits_.max_total_bytes) return WithCode(Code::kFull);
    AppendData(*s, std::move(*plan.data));
  }
  ApplyAppend(s->meta, args, now, limits_);
  if (plan.changes_meta) Persist(*s);
  Changed(args.path);
  r.code = Code::kOk;
  r.info = InfoOf(s->meta, s->tail);
  r.offset = s->tail;
  return r;
}

OpResult MemoryStreamStore::DoDelete(const std::string& path) {
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

OpResult MemoryStreamStore::Head(const std::string& path, bool touch) {
  std::lock_guard lock(mu_);
  const std::int64_t now = Now();
  Stream* s = Lookup(path, now);
  if (s == nullptr) return WithCode(Code::kNotFound);
  if (s->meta.soft_deleted) return WithCode(Code::kGone);
  if (touch) s->last_access_ms = now;
  OpResult r;
  r.info = InfoOf(s->meta, s->tail);
  return r;
}

ReadResult MemoryStreamStore::Read(const std::string& path, std::optional<Offset> after) {
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
  out.info = InfoOf(s->meta, s->tail);
  out.json = IsJsonType(s->meta.content_type);
  return out;
}

std::map<std::string, Offset> MemoryStreamStore::Tails(const std::vector<std::string>& paths) {
  std::map<std::string, Offset> out;
  for (const std::string& path : paths) {
    const OpResult head = Head(path);
    if (head.code == Code::kOk) out[path] = head.info.tail;
  }
  return out;
}

void MemoryStreamStore::SetChangeHook(std::function<void(const std::string&)> hook) {
  watchers_.SetHook(std::move(hook));
}

std::vector<std::string> MemoryStreamStore::Paths(const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::vector<std::string> paths;
  for (const auto& [path, s] : streams_)
    if (path.rfind(prefix, 0) == 0) paths.push_back(path);
  return paths;
}

void MemoryStreamStore::PutState(const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  if (value.empty()) {
    state_.erase(key);
  } else {
    state_[key] = value;
  }
  if (journal_) journal_->PutState(key, value);
}

std::map<std::string, std::string> MemoryStreamStore::State(const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> out;
  for (auto it = state_.lower_bound(prefix); it != state_.end() && it->first.rfind(prefix, 0) == 0;
       ++it)
    out.insert(*it);
  return out;
}

void MemoryStreamStore::WhenDurable(std::function<void(bool ok)> fn) {
  if (journal_) {
    journal_->AfterCommit(std::move(fn));
  } else {
    fn(true);
  }
}

std::uint64_t MemoryStreamStore::Watch(const std::string& path, std::function<void()> fn) {
  return watchers_.Add(path, std::move(fn));
}

void MemoryStreamStore::Unwatch(const std::string& path, std::uint64_t id) {
  watchers_.Remove(path, id);
}

}  // namespace agentstream::streams

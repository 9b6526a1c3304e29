// Durability of the subscription API on one daemon: each subscription's whole state
// (configuration, followed streams with their acknowledged offsets, the wake in progress and its
// lease) is one record of the memory stream store's journal, written whenever a request, a
// stream change or a webhook answer changed it; the keys that sign webhooks and derive callback
// tokens live in a key file.
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>

#include "streams/memory_stream_store.h"
#include "streams/subscription_records.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

namespace json = boost::json;

namespace {

constexpr std::string_view kRecordPrefix = kSubscriptionRecordPrefix;
constexpr std::size_t kKeyBytes = kSubscriptionSeedBytes + kSubscriptionTokenKeyBytes;

std::string Field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t Number(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

// Reads the key file, or creates it.
Status LoadOrCreateKeys(const std::string& path, std::string* keys) {
  AS_ASSIGN_OR_RETURN(*keys, ReadSubscriptionKeyFile(path));
  if (!keys->empty()) return Status::Ok();
  keys->resize(kKeyBytes);
  randombytes_buf(keys->data(), keys->size());
  return WriteSubscriptionKeyFile(path, *keys);
}

class MemorySubscriptionRecords final : public SubscriptionRecords {
 public:
  MemorySubscriptionRecords(MemoryStreamStore& store, std::string key_path)
      : store_(store), key_path_(std::move(key_path)) {}

  Result<std::string> OpenKeys() override {
    std::lock_guard lock(mu_);
    for (const auto& [key, record] : store_.State(std::string(kRecordPrefix))) {
      std::optional<SubscriptionRecord> s = DecodeSubscription(record);
      if (!s)
        return Error(ErrorCode::kCorruption,
                     "the journaled subscription " + key + " is unreadable");
      saved_[s->id] = record;
      subs_[s->id] = std::move(*s);
    }
    any_ = !subs_.empty();
    if (key_path_.empty()) return std::string();
    std::string keys;
    AS_RETURN_IF_ERROR(LoadOrCreateKeys(key_path_, &keys));
    return keys;
  }

  Status Update(const std::string& id, const std::function<void(Slot&)>& fn) override {
    std::lock_guard lock(mu_);
    Slot slot;
    slot.now_ms = system::WallClockMs();
    auto it = subs_.find(id);
    if (it != subs_.end()) {
      slot.sub = std::move(it->second);
      subs_.erase(it);
    }
    // Counted as present while `fn` runs (it is only out of the map to be handed over).
    const bool existed = slot.sub.has_value();
    slot.count = [this, existed] { return subs_.size() + (existed ? 1 : 0); };
    fn(slot);
    if (slot.sub) subs_[id] = std::move(*slot.sub);
    Save(id);
    any_ = !subs_.empty();
    return Status::Ok();
  }

  Result<std::vector<Candidate>> Candidates(const std::string& relative_path) override {
    std::lock_guard lock(mu_);
    std::vector<Candidate> out;
    for (const auto& [id, s] : subs_) {
      const bool linked = s.streams.count(relative_path) > 0;
      if (!s.pattern.empty() || linked) out.push_back(Candidate{id, s.pattern, linked});
    }
    return out;
  }

  bool Any() const override { return any_; }

 private:
  // Journals subscription `id` (or its removal) if it changed since it was last journaled.
  void Save(const std::string& id) {
    const std::string key = std::string(kRecordPrefix) + id;
    auto it = subs_.find(id);
    if (it == subs_.end()) {
      if (saved_.erase(id) > 0) store_.PutState(key, "");
      return;
    }
    std::string record = EncodeSubscription(it->second);
    auto& saved = saved_[id];
    if (saved == record) return;
    store_.PutState(key, record);
    saved = std::move(record);
  }

  MemoryStreamStore& store_;
  const std::string key_path_;
  std::mutex mu_;  // guards subs_ and saved_
  std::map<std::string, SubscriptionRecord> subs_;
  std::map<std::string, std::string> saved_;  // id -> the record last journaled
  std::atomic<bool> any_{false};
};

}  // namespace

std::string EncodeSubscription(const SubscriptionRecord& s) {
  json::object streams;
  for (const auto& [path, link] : s.streams) {
    json::array types;
    for (const std::string& t : link.types) types.emplace_back(t);
    streams[path] = json::object{{"types", std::move(types)}, {"acked", link.acked}};
  }
  json::object snapshot;
  for (const auto& [path, tail] : s.snapshot) snapshot[path] = tail;
  json::array explicit_streams;
  for (const std::string& path : s.explicit_streams) explicit_streams.emplace_back(path);
  return json::serialize(json::object{{"id", s.id},
                                      {"type", s.type},
                                      {"pattern", s.pattern},
                                      {"webhook_url", s.webhook_url},
                                      {"wake_stream", s.wake_stream},
                                      {"description", s.description},
                                      {"base_url", s.base_url},
                                      {"created_at", s.created_at},
                                      {"explicit_streams", std::move(explicit_streams)},
                                      {"lease_ttl_ms", s.lease_ttl_ms},
                                      {"status", s.status},
                                      {"streams", std::move(streams)},
                                      {"generation", s.generation},
                                      {"wake_id", s.wake_id},
                                      {"token", s.token},
                                      {"holder", s.holder},
                                      {"lease_expires_ms", s.lease_expires_ms},
                                      {"snapshot", std::move(snapshot)}});
}

std::optional<SubscriptionRecord> DecodeSubscription(const std::string& text) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const json::object& o = v.as_object();
  SubscriptionRecord s;
  s.id = Field(o, "id");
  if (s.id.empty()) return std::nullopt;
  s.type = Field(o, "type");
  s.pattern = Field(o, "pattern");
  s.webhook_url = Field(o, "webhook_url");
  s.wake_stream = Field(o, "wake_stream");
  s.description = Field(o, "description");
  s.base_url = Field(o, "base_url");
  s.created_at = Field(o, "created_at");
  if (const auto* list = o.if_contains("explicit_streams"); list != nullptr && list->is_array())
    for (const json::value& path : list->as_array())
      if (path.is_string()) s.explicit_streams.emplace_back(path.as_string());
  s.lease_ttl_ms = Number(o, "lease_ttl_ms");
  s.status = Field(o, "status");
  if (const auto* map = o.if_contains("streams"); map != nullptr && map->is_object()) {
    for (const auto& [path, value] : map->as_object()) {
      if (!value.is_object()) continue;
      SubscriptionLink& link = s.streams[std::string(path)];
      link.acked = Field(value.as_object(), "acked");
      if (const auto* types = value.as_object().if_contains("types");
          types != nullptr && types->is_array())
        for (const json::value& t : types->as_array())
          if (t.is_string()) link.types.emplace(t.as_string());
    }
  }
  s.generation = Number(o, "generation");
  s.wake_id = Field(o, "wake_id");
  s.token = Field(o, "token");
  s.holder = Field(o, "holder");
  s.lease_expires_ms = Number(o, "lease_expires_ms");
  if (const auto* map = o.if_contains("snapshot"); map != nullptr && map->is_object())
    for (const auto& [path, tail] : map->as_object())
      if (tail.is_string()) s.snapshot[std::string(path)] = std::string(tail.as_string());
  return s;
}

Result<std::string> ReadSubscriptionKeyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string();
  std::string keys{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (keys.size() != kKeyBytes)
    return Error(ErrorCode::kCorruption, "the subscription key file " + path + " is not " +
                                             std::to_string(kKeyBytes) + " bytes");
  return keys;
}

Status WriteSubscriptionKeyFile(const std::string& path, const std::string& keys) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error(ErrorCode::kIoError, "cannot create " + temp);
  const bool written = ::write(fd, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()) &&
                       ::fsync(fd) == 0;
  ::close(fd);
  if (!written || std::rename(temp.c_str(), path.c_str()) != 0)
    return Error(ErrorCode::kIoError, "cannot write the subscription key file " + path);
  return Status::Ok();
}

std::unique_ptr<SubscriptionRecords> MakeMemorySubscriptionRecords(MemoryStreamStore& store,
                                                                   std::string key_path) {
  return std::make_unique<MemorySubscriptionRecords>(store, std::move(key_path));
}

}  // namespace agentstream::streams

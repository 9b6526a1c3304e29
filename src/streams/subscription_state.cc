// Durability of the subscription API: each subscription's whole state (configuration, followed
// streams with their acknowledged offsets, the wake in progress and its lease) is one record of
// the stream store's journal, written whenever a request, a stream change or a webhook answer
// changed it; the keys that sign webhooks and derive callback tokens live in a key file.
#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "streams/subscriptions.h"

namespace agentstream::streams {

namespace json = boost::json;

namespace {

constexpr std::string_view kRecordPrefix = "subscription/";
// The key file: the Ed25519 seed, then the token key.
constexpr std::size_t kSeedBytes = crypto_sign_SEEDBYTES;
constexpr std::size_t kTokenKeyBytes = 32;

std::string Field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::int64_t Number(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_int64() ? v->as_int64() : 0;
}

// Reads the key file, or creates it (mode 0600, written whole then renamed into place).
Status LoadOrCreateKeys(const std::string& path, std::string* keys) {
  std::ifstream in(path, std::ios::binary);
  if (in) {
    keys->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (keys->size() != kSeedBytes + kTokenKeyBytes)
      return Error(ErrorCode::kCorruption, "the subscription key file " + path + " is not " +
                                               std::to_string(kSeedBytes + kTokenKeyBytes) +
                                               " bytes");
    return Status::Ok();
  }
  keys->resize(kSeedBytes + kTokenKeyBytes);
  randombytes_buf(keys->data(), keys->size());
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Error(ErrorCode::kIoError, "cannot create " + temp);
  const bool written =
      ::write(fd, keys->data(), keys->size()) == static_cast<ssize_t>(keys->size()) &&
      ::fsync(fd) == 0;
  ::close(fd);
  if (!written || std::rename(temp.c_str(), path.c_str()) != 0)
    return Error(ErrorCode::kIoError, "cannot write the subscription key file " + path);
  return Status::Ok();
}

}  // namespace

std::string SubscriptionManager::Encode(const Subscription& s) const {
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

std::optional<SubscriptionManager::Subscription> SubscriptionManager::Decode(
    const std::string& text) {
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const json::object& o = v.as_object();
  Subscription s;
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
      Link& link = s.streams[std::string(path)];
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

void SubscriptionManager::Save(const std::string& id) {
  const std::string key = std::string(kRecordPrefix) + id;
  auto it = subs_.find(id);
  if (it == subs_.end()) {
    if (saved_.erase(id) > 0) store_.PutState(key, "");
    return;
  }
  std::string record = Encode(it->second);
  auto& saved = saved_[id];
  if (saved == record) return;
  store_.PutState(key, record);
  saved = std::move(record);
}

Status SubscriptionManager::Restore(const std::string& key_path) {
  std::lock_guard lock(mu_);
  if (!key_path.empty()) {
    std::string keys;
    if (Status loaded = LoadOrCreateKeys(key_path, &keys); !loaded.ok()) return loaded;
    crypto_sign_seed_keypair(public_key_, secret_key_,
                             reinterpret_cast<const unsigned char*>(keys.data()));
    std::copy_n(keys.data() + kSeedBytes, kTokenKeyBytes, reinterpret_cast<char*>(token_key_));
    sodium_memzero(keys.data(), keys.size());
    DeriveKeyId();
  }
  for (const auto& [key, record] : store_.State(std::string(kRecordPrefix))) {
    std::optional<Subscription> s = Decode(record);
    if (!s)
      return Error(ErrorCode::kCorruption, "the journaled subscription " + key + " is unreadable");
    saved_[s->id] = record;
    subs_[s->id] = std::move(*s);
  }
  any_subscription_ = !subs_.empty();
  return Status::Ok();
}

}  // namespace agentstream::streams

#include "devices/device_service.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

#include "core/utf8.h"
#include "log/log.h"
#include "net/base64.h"
#include "system/random_id.h"
#include "system/wall_clock.h"

namespace agentstream::devices {

namespace {

std::string RandomSecret(std::string_view prefix, std::size_t bytes) {
  std::string raw(bytes, '\0');
  randombytes_buf(raw.data(), raw.size());
  std::string out(prefix);
  out += net::EncodeBase64(raw, net::Base64Alphabet::kUrlSafeNoPadding);
  sodium_memzero(raw.data(), raw.size());
  return out;
}

// Base64url without padding of n bytes is ceil(4n/3) characters.
constexpr std::size_t EncodedLength(std::size_t bytes) { return (bytes * 4 + 2) / 3; }

bool LooksLike(std::string_view text, std::string_view prefix, std::size_t bytes) {
  if (text.size() != prefix.size() + EncodedLength(bytes) ||
      text.substr(0, prefix.size()) != prefix)
    return false;
  auto decoded =
      net::DecodeBase64(text.substr(prefix.size()), net::Base64Alphabet::kUrlSafeNoPadding);
  return decoded && decoded->size() == bytes;
}

Status Refused() {
  return Error(ErrorCode::kUnauthenticated, "the pairing code is unknown, used or expired");
}

}  // namespace

std::string HashSecret(std::string_view secret) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest{};
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(secret.data()),
                     secret.size());
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

std::string NewDeviceToken() { return RandomSecret(kDeviceTokenPrefix, kDeviceTokenBytes); }
std::string NewPairingCode() { return RandomSecret(kPairingCodePrefix, kPairingCodeBytes); }

bool LooksLikeDeviceToken(std::string_view text) {
  return LooksLike(text, kDeviceTokenPrefix, kDeviceTokenBytes);
}
bool LooksLikePairingCode(std::string_view text) {
  return LooksLike(text, kPairingCodePrefix, kPairingCodeBytes);
}

Status CheckDeviceName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes)
    return Error(ErrorCode::kInvalidArgument,
                 "a device name must be 1 to " + std::to_string(kMaxNameBytes) + " bytes");
  if (!IsValidUtf8(name))
    return Error(ErrorCode::kInvalidArgument, "a device name must be UTF-8 text");
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    // C0 controls and DEL; C1 controls are U+0080..U+009F, encoded as C2 80..C2 9F.
    const bool c1 = c == 0xc2 && i + 1 < name.size() &&
                    static_cast<unsigned char>(name[i + 1]) >= 0x80 &&
                    static_cast<unsigned char>(name[i + 1]) <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1)
      return Error(ErrorCode::kInvalidArgument,
                   "a device name must not contain control characters");
  }
  return Status::Ok();
}

std::string CleanUserAgent(std::string_view user_agent) {
  std::string out(user_agent.substr(0, kMaxUserAgentBytes));
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) c = '?';
  }
  return out;
}

DeviceService::DeviceService(DeviceStore& store, DeviceServiceOptions options, Clock clock)
    : store_(store), options_(options), clock_(std::move(clock)) {}

DeviceService::~DeviceService() { Stop(); }

TimestampMs DeviceService::Now() const { return clock_ ? clock_() : system::WallClockMs(); }

void DeviceService::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Run(); });
}

void DeviceService::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void DeviceService::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    PollOnce();
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(options_.poll_interval_ms),
                   [&] { return stopping_; });
  }
}

Result<NewPairing> DeviceService::CreatePairing(std::string_view name, std::int64_t lifetime_ms) {
  AS_RETURN_IF_ERROR(CheckDeviceName(name));
  if (lifetime_ms < kMinPairingLifetimeMs || lifetime_ms > kMaxPairingLifetimeMs)
    return Error(ErrorCode::kInvalidArgument,
                 "a pairing code lives 10 s to 24 h (expiresInMs 10000 to 86400000)");
  NewPairing out{NewPairingCode(), std::string(name), Now() + lifetime_ms};
  AS_RETURN_IF_ERROR(store_.AddPairing(
      PairingRecord{HashSecret(out.code), out.name, out.expires_ms - lifetime_ms, out.expires_ms}));
  return out;
}

Result<PairedDevice> DeviceService::Exchange(std::string_view code, std::string_view user_agent,
                                             const std::string& client_address) {
  AS_RETURN_IF_ERROR(CheckFailures(client_address));
  if (!LooksLikePairingCode(code)) {
    CountFailure(client_address);
    return Refused();
  }
  const TimestampMs now = Now();
  PairedDevice out{NewDeviceToken(), {}};
  DeviceRecord device;
  device.id = system::RandomId("dev");
  device.name = "device";  // the code's name replaces it
  device.token_hash = HashSecret(out.token);
  device.created_ms = now;
  device.last_seen_ms = now;
  device.user_agent = CleanUserAgent(user_agent);
  Result<DeviceRecord> paired = store_.UsePairing(HashSecret(code), std::move(device), now);
  if (!paired.ok()) {
    if (paired.status().code() != ErrorCode::kNotFound) return paired.status();
    CountFailure(client_address);
    return Refused();
  }
  out.device = std::move(*paired);
  log::Info("devices.paired", {{"device", out.device.id}, {"client", client_address}});
  return out;
}

Result<std::optional<DeviceRecord>> DeviceService::Authenticate(std::string_view token,
                                                                std::string_view user_agent,
                                                                const std::string& client_address) {
  const std::string hash = HashSecret(token);
  const TimestampMs now = Now();
  std::optional<DeviceRecord> cached;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(hash);
    if (it != cache_.end()) {
      if (now >= it->second.fetched_ms && now - it->second.fetched_ms < kCacheTtlMs)
        cached = it->second.device;
      else
        cache_.erase(it);
    }
  }
  if (cached) {
    NoteRequest(*cached, user_agent);
    return cached;
  }
  AS_RETURN_IF_ERROR(CheckFailures(client_address));
  std::optional<DeviceRecord> found;
  if (LooksLikeDeviceToken(token)) {
    AS_ASSIGN_OR_RETURN(found, store_.FindDeviceByToken(hash));
  }
  if (!found || found->revoked()) {
    CountFailure(client_address);
    return std::optional<DeviceRecord>();
  }
  Remember(hash, *found);
  NoteRequest(*found, user_agent);
  return found;
}

Result<std::vector<DeviceRecord>> DeviceService::List() { return store_.ListDevices(); }

Result<DeviceRecord> DeviceService::Get(const std::string& id) { return store_.GetDevice(id); }

Result<DeviceRecord> DeviceService::Rename(const std::string& id, std::string_view name) {
  AS_RETURN_IF_ERROR(CheckDeviceName(name));
  AS_RETURN_IF_ERROR(store_.RenameDevice(id, std::string(name)));
  {
    std::lock_guard lock(mu_);
    for (auto& [hash, entry] : cache_)
      if (entry.device.id == id) entry.device.name = std::string(name);
  }
  return store_.GetDevice(id);
}

Result<DeviceRecord> DeviceService::Revoke(const std::string& id) {
  AS_RETURN_IF_ERROR(store_.RevokeDevice(id, Now()));
  Announce(id);
  return store_.GetDevice(id);
}

int DeviceService::AddRevocationListener(RevocationListener listener) {
  std::lock_guard lock(listeners_mu_);
  const int id = next_listener_++;
  listeners_.emplace(id, std::move(listener));
  return id;
}

void DeviceService::RemoveRevocationListener(int id) {
  std::lock_guard lock(listeners_mu_);
  listeners_.erase(id);
}

void DeviceService::Announce(const std::string& device_id) {
  std::lock_guard listening(listeners_mu_);
  {
    std::lock_guard lock(mu_);
    Evict(device_id);
    if (!announced_.emplace(device_id, Now()).second) return;
  }
  log::Info("devices.revoked", {{"device", device_id}});
  for (const auto& [id, listener] : listeners_) listener(device_id);
}

void DeviceService::PollOnce() {
  const TimestampMs now = Now();
  Result<std::vector<std::string>> revoked = store_.RevokedSince(now - kRevocationLookbackMs);
  {
    std::lock_guard lock(poll_mu_);
    poll_failures_.Report(revoked.status());
  }
  if (revoked.ok()) {
    for (const std::string& id : *revoked) Announce(id);
    std::lock_guard lock(mu_);
    // A revocation older than the lookback is no longer returned: forget it (bounded).
    std::erase_if(announced_, [&](const auto& entry) {
      return entry.second < now - 2 * kRevocationLookbackMs &&
             std::find(revoked->begin(), revoked->end(), entry.first) == revoked->end();
    });
  }
  std::map<std::string, Touch> touches;
  {
    std::lock_guard lock(mu_);
    touches.swap(pending_touches_);
  }
  for (const auto& [id, touch] : touches) {
    Status written = store_.TouchDevice(id, touch.seen_ms, touch.user_agent);
    if (!written.ok() && written.code() != ErrorCode::kNotFound)
      log::Warn("devices.touch_failed", {{"device", id}, {"error", written.ToString()}});
  }
}

std::size_t DeviceService::cached_entries() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

Status DeviceService::CheckFailures(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = failures_.find(address);
  if (it == failures_.end()) return Status::Ok();
  if (Now() - it->second.window_start_ms >= options_.failure_window_ms) {
    failures_.erase(it);
    return Status::Ok();
  }
  if (it->second.count < options_.max_failures) return Status::Ok();
  return Error(ErrorCode::kResourceExhausted,
               "too many failed attempts from this address; try again in a minute");
}

void DeviceService::CountFailure(const std::string& address) {
  std::lock_guard lock(mu_);
  const TimestampMs now = Now();
  auto it = failures_.find(address);
  if (it != failures_.end() && now - it->second.window_start_ms >= options_.failure_window_ms)
    it->second = Failures{now, 0};
  if (it == failures_.end()) {
    if (failures_.size() >= options_.max_tracked_addresses) {
      std::erase_if(failures_, [&](const auto& entry) {
        return now - entry.second.window_start_ms >= options_.failure_window_ms;
      });
      // Still full: the addresses counting are many; the oldest window goes.
      if (failures_.size() >= options_.max_tracked_addresses) {
        auto oldest = std::min_element(failures_.begin(), failures_.end(), [](auto& a, auto& b) {
          return a.second.window_start_ms < b.second.window_start_ms;
        });
        failures_.erase(oldest);
      }
    }
    it = failures_.emplace(address, Failures{now, 0}).first;
  }
  ++it->second.count;
}

void DeviceService::Remember(const std::string& token_hash, const DeviceRecord& device) {
  std::lock_guard lock(mu_);
  if (announced_.count(device.id)) return;  // revoked meanwhile
  const TimestampMs now = Now();
  if (cache_.size() >= options_.max_cache_entries) {
    std::erase_if(cache_, [&](const auto& entry) {
      return now - entry.second.fetched_ms >= kCacheTtlMs || now < entry.second.fetched_ms;
    });
    if (cache_.size() >= options_.max_cache_entries) {
      auto oldest = std::min_element(cache_.begin(), cache_.end(), [](auto& a, auto& b) {
        return a.second.fetched_ms < b.second.fetched_ms;
      });
      cache_.erase(oldest);
    }
  }
  cache_[token_hash] = CacheEntry{device, now};
}

void DeviceService::Evict(const std::string& device_id) {
  std::erase_if(cache_, [&](const auto& entry) { return entry.second.device.id == device_id; });
  pending_touches_.erase(device_id);
}

void DeviceService::NoteRequest(const DeviceRecord& device, std::string_view user_agent) {
  std::lock_guard lock(mu_);
  const TimestampMs now = Now();
  auto it = last_touch_.find(device.id);
  if (it != last_touch_.end() && now >= it->second && now - it->second < options_.touch_interval_ms)
    return;
  if (it == last_touch_.end() && last_touch_.size() >= options_.max_cache_entries) {
    std::erase_if(last_touch_, [&](const auto& entry) {
      return now - entry.second >= options_.touch_interval_ms;
    });
    if (last_touch_.size() >= options_.max_cache_entries) return;  // touched at the next chance
  }
  last_touch_[device.id] = now;
  pending_touches_[device.id] = Touch{now, CleanUserAgent(user_agent)};
}

}  // namespace agentstream::devices

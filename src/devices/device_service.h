// DeviceService: paired devices (docs/remote.md, "Pairing a phone"). The owner creates a one-time
// pairing code; a device exchanges it for its own token; each request of the device is then
// authenticated by that token, until the device is revoked, on this daemon and on every daemon
// sharing the store.
//
// Secrets: a device token is "asd_" + base64url of 32 random bytes, a pairing code "asp_" +
// base64url of 24 random bytes (libsodium's generator); the store keeps only their SHA-256.
//
// Costs: an authenticated token is cached (token hash -> device) for at most kCacheTtlMs, at most
// max_cache_entries of them, so most requests cost no store round trip; a revocation evicts its
// device at once here, and on the other daemons at their next poll of the store (every
// poll_interval). A device's last-seen time is written at most once per touch_interval, by the
// poll thread, never by the request. Failed pairing exchanges and unknown device tokens are
// counted per client address: past max_failures within failure_window, the address is refused
// (kResourceExhausted) until the window passes.
//
// Threading: every method may be called from any thread; methods reaching the store block for
// one round trip. Start() runs the poll thread; Stop() (or the destructor) joins it. Revocation
// listeners run on the poll thread, or on the thread that calls Revoke(); they must not block.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "log/log.h"
#include "store/device_store.h"

namespace agentstream::devices {

inline constexpr std::string_view kDeviceTokenPrefix = "asd_";
inline constexpr std::string_view kPairingCodePrefix = "asp_";
inline constexpr std::size_t kDeviceTokenBytes = 32;
inline constexpr std::size_t kPairingCodeBytes = 24;
inline constexpr std::size_t kMaxNameBytes = 64;
inline constexpr std::size_t kMaxUserAgentBytes = 256;
inline constexpr std::int64_t kMinPairingLifetimeMs = 10'000;             // 10 s
inline constexpr std::int64_t kMaxPairingLifetimeMs = 24LL * 3'600'000;   // 24 h
inline constexpr std::int64_t kDefaultPairingLifetimeMs = 10LL * 60'000;  // 10 min
inline constexpr std::int64_t kCacheTtlMs = 5000;
// A revocation is looked for this far back on every poll, so daemons whose clocks differ by up
// to this much still see it.
inline constexpr std::int64_t kRevocationLookbackMs = 60'000;

struct DeviceServiceOptions {
  std::int64_t touch_interval_ms = 30'000;  // last-seen written at most this often per device
  std::size_t max_cache_entries = 1024;     // authenticated tokens kept (oldest dropped)
  std::int64_t poll_interval_ms = 250;      // RevokedSince and pending touches
  std::size_t max_failures = 10;            // per client address within failure_window_ms
  std::int64_t failure_window_ms = 60'000;
  std::size_t max_tracked_addresses = 4096;  // addresses whose failures are counted
};

// A new pairing code, shown to the owner once.
struct NewPairing {
  std::string code;  // "asp_..."
  std::string name;
  TimestampMs expires_ms = 0;
};

// A device paired by an exchange, with its token (shown to the device once).
struct PairedDevice {
  std::string token;  // "asd_..."
  DeviceRecord device;
};

// SHA-256 of `secret`, 32 raw bytes.
std::string HashSecret(std::string_view secret);
// "asd_" + base64url(32 random bytes); "asp_" + base64url(24 random bytes).
std::string NewDeviceToken();
std::string NewPairingCode();
// True when `text` has the shape of a device token / pairing code (prefix and length); says
// nothing of whether it is valid.
bool LooksLikeDeviceToken(std::string_view text);
bool LooksLikePairingCode(std::string_view text);
// kInvalidArgument unless `name` is 1 to 64 bytes of UTF-8 without control characters.
Status CheckDeviceName(std::string_view name);
// A User-Agent as stored: printable ASCII (others replaced by '?'), at most 256 bytes.
std::string CleanUserAgent(std::string_view user_agent);

class DeviceService {
 public:
  using Clock = std::function<TimestampMs()>;
  using RevocationListener = std::function<void(const std::string& device_id)>;

  // `store` must outlive the service. `clock` defaults to the wall clock.
  explicit DeviceService(DeviceStore& store, DeviceServiceOptions options = {},
                         Clock clock = nullptr);
  ~DeviceService();
  DeviceService(const DeviceService&) = delete;
  DeviceService& operator=(const DeviceService&) = delete;

  // Starts the poll thread (idempotent); Stop joins it (idempotent).
  void Start();
  void Stop();

  // A pairing code for a device to be called `name`, valid for `lifetime_ms` (10 s to 24 h).
  // kInvalidArgument for a bad name or lifetime.
  Result<NewPairing> CreatePairing(std::string_view name, std::int64_t lifetime_ms);
  // Uses `code` (once) and pairs a device. kUnauthenticated with one message for a code that is
  // malformed, unknown, used or expired; kResourceExhausted when `client_address` failed too
  // often.
  Result<PairedDevice> Exchange(std::string_view code, std::string_view user_agent,
                                const std::string& client_address);

  // The device whose token is `token`: nullopt when the token is unknown or the device is
  // revoked (counted as a failure of `client_address`). kResourceExhausted when the address
  // failed too often; store errors as they are. Records the request (throttled).
  Result<std::optional<DeviceRecord>> Authenticate(std::string_view token,
                                                   std::string_view user_agent,
                                                   const std::string& client_address);

  Result<std::vector<DeviceRecord>> List();
  Result<DeviceRecord> Get(const std::string& id);
  Result<DeviceRecord> Rename(const std::string& id, std::string_view name);
  // Revokes `id` (idempotent), evicts it from the cache and tells the listeners at once.
  Result<DeviceRecord> Revoke(const std::string& id);

  // `listener` hears each device revoked (on any daemon sharing the store) once, within about
  // one poll interval. Returns an id for RemoveRevocationListener.
  int AddRevocationListener(RevocationListener listener);
  void RemoveRevocationListener(int id);

  // One poll now (the poll thread's work): announces revocations, writes pending touches.
  void PollOnce();

  std::size_t cached_entries() const;
  const DeviceServiceOptions& options() const { return options_; }

 private:
  struct CacheEntry {
    DeviceRecord device;
    TimestampMs fetched_ms = 0;
  };
  struct Failures {
    TimestampMs window_start_ms = 0;
    std::size_t count = 0;
  };
  struct Touch {
    TimestampMs seen_ms = 0;
    std::string user_agent;
  };

  TimestampMs Now() const;
  // kResourceExhausted when `address` failed max_failures times in the current window.
  Status CheckFailures(const std::string& address);
  void CountFailure(const std::string& address);
  void Remember(const std::string& token_hash, const DeviceRecord& device);
  void Evict(const std::string& device_id);
  void NoteRequest(const DeviceRecord& device, std::string_view user_agent);
  void Announce(const std::string& device_id);
  void Run();

  DeviceStore& store_;
  const DeviceServiceOptions options_;
  const Clock clock_;

  mutable std::mutex mu_;                              // guards everything below
  std::unordered_map<std::string, CacheEntry> cache_;  // by token hash
  std::map<std::string, Failures> failures_;           // by client address
  std::map<std::string, TimestampMs> last_touch_;      // by device id: last queued touch
  std::map<std::string, Touch> pending_touches_;       // by device id
  std::map<std::string, TimestampMs> announced_;       // revoked ids told, and when
  bool stopping_ = false;
  std::mutex poll_mu_;  // guards poll_failures_ (PollOnce may run on any thread)
  // A store that stays unreachable logs one line, not one per poll.
  log::RepeatedFailure poll_failures_{"devices.poll_failed"};
  // Held while listeners run, so that once RemoveRevocationListener returns its listener no
  // longer runs. Taken before mu_ when both are.
  std::mutex listeners_mu_;
  std::map<int, RevocationListener> listeners_;  // guarded by listeners_mu_
  int next_listener_ = 1;                        // guarded by listeners_mu_
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace agentstream::devices

// DeviceService over the memory log's DeviceStore, on a clock the test moves: codes and tokens,
// names, the cache, throttled touches, failure limits, revocation listeners.
#include "devices/device_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "net/base64.h"
#include "store/memory_log.h"
#include "system/wall_clock.h"

namespace agentstream::devices {
namespace {

// Counts the store's token lookups and touches.
class CountingDevices final : public DeviceStore {
 public:
  explicit CountingDevices(DeviceStore& inner) : inner_(inner) {}
  Status AddPairing(const PairingRecord& p) override { return inner_.AddPairing(p); }
  Result<DeviceRecord> UsePairing(const std::string& h, DeviceRecord d, TimestampMs now) override {
    return inner_.UsePairing(h, std::move(d), now);
  }
  Result<std::vector<DeviceRecord>> ListDevices() override { return inner_.ListDevices(); }
  Result<DeviceRecord> GetDevice(const std::string& id) override { return inner_.GetDevice(id); }
  Result<std::optional<DeviceRecord>> FindDeviceByToken(const std::string& h) override {
    ++lookups;
    return inner_.FindDeviceByToken(h);
  }
  Status RenameDevice(const std::string& id, const std::string& n) override {
    return inner_.RenameDevice(id, n);
  }
  Status RevokeDevice(const std::string& id, TimestampMs now) override {
    return inner_.RevokeDevice(id, now);
  }
  Status TouchDevice(const std::string& id, TimestampMs seen, const std::string& ua) override {
    ++touches;
    return inner_.TouchDevice(id, seen, ua);
  }
  Status SetDeviceSettings(const std::string& id, const std::string& s) override {
    return inner_.SetDeviceSettings(id, s);
  }
  Result<std::vector<std::string>> RevokedSince(TimestampMs since) override {
    return inner_.RevokedSince(since);
  }
  Status ReportPresence(const PresenceRecord& p) override { return inner_.ReportPresence(p); }
  Status DropPresence(const std::string& c) override { return inner_.DropPresence(c); }
  Result<std::vector<PresenceRecord>> ListPresence(TimestampMs now) override {
    return inner_.ListPresence(now);
  }
  std::atomic<int> lookups{0};
  std::atomic<int> touches{0};

 private:
  DeviceStore& inner_;
};

class DeviceServiceTest : public ::testing::Test {
 protected:
  MemoryEventLog log_;
  CountingDevices store_{log_.devices()};
  TimestampMs now_ = 1'000'000;
  DeviceService service_{store_, DeviceServiceOptions{}, [this] { return now_; }};

  PairedDevice Pair(const std::string& name) {
    auto pairing = service_.CreatePairing(name, kDefaultPairingLifetimeMs);
    EXPECT_TRUE(pairing.ok()) << pairing.status().ToString();
    auto paired = service_.Exchange(pairing->code, "Phone/1.0", "10.0.0.2");
    EXPECT_TRUE(paired.ok()) << paired.status().ToString();
    return *paired;
  }
};

TEST(DeviceSecrets, ShapesAndRandomness) {
  const std::string token = NewDeviceToken();
  const std::string code = NewPairingCode();
  EXPECT_EQ(token.rfind("asd_", 0), 0u);
  EXPECT_EQ(code.rfind("asp_", 0), 0u);
  EXPECT_EQ(net::DecodeBase64(token.substr(4), net::Base64Alphabet::kUrlSafeNoPadding)->size(),
            32u);
  EXPECT_EQ(net::DecodeBase64(code.substr(4), net::Base64Alphabet::kUrlSafeNoPadding)->size(), 24u);
  EXPECT_NE(token, NewDeviceToken());
  EXPECT_TRUE(LooksLikeDeviceToken(token));
  EXPECT_FALSE(LooksLikeDeviceToken(code));
  EXPECT_TRUE(LooksLikePairingCode(code));
  EXPECT_FALSE(LooksLikePairingCode(code + "A"));
  EXPECT_FALSE(LooksLikePairingCode("asp_" + std::string(32, '*')));
  EXPECT_EQ(HashSecret(token).size(), 32u);
  EXPECT_EQ(HashSecret("abc"), HashSecret("abc"));
  EXPECT_NE(HashSecret("abc"), HashSecret("abd"));
}

TEST(DeviceNames, Validated) {
  EXPECT_TRUE(CheckDeviceName("phone").ok());
  EXPECT_TRUE(CheckDeviceName("Anna’s phone ✓").ok());
  EXPECT_TRUE(CheckDeviceName(std::string(64, 'a')).ok());
  EXPECT_FALSE(CheckDeviceName("").ok());
  EXPECT_FALSE(CheckDeviceName(std::string(65, 'a')).ok());
  EXPECT_FALSE(CheckDeviceName("a\nb").ok());
  EXPECT_FALSE(CheckDeviceName("a\x7f").ok());
  EXPECT_FALSE(CheckDeviceName("a\xc2\x85").ok());  // NEL, a C1 control
  EXPECT_FALSE(CheckDeviceName("\xff").ok());
  EXPECT_EQ(CleanUserAgent("Mozilla/5.0\r\n\xff"), "Mozilla/5.0???");
  EXPECT_EQ(CleanUserAgent(std::string(300, 'u')).size(), 256u);
}

TEST_F(DeviceServiceTest, PairingLifetimeBounds) {
  EXPECT_EQ(service_.CreatePairing("p", 9'999).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(service_.CreatePairing("p", 86'400'001).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(service_.CreatePairing("p", 10'000).ok());
  EXPECT_TRUE(service_.CreatePairing("p", 86'400'000).ok());
  EXPECT_EQ(service_.CreatePairing("", 10'000).status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(DeviceServiceTest, ExchangeOnceThenAuthenticate) {
  auto pairing = service_.CreatePairing("phone", 60'000);
  ASSERT_TRUE(pairing.ok());
  EXPECT_EQ(pairing->expires_ms, now_ + 60'000);
  auto paired = service_.Exchange(pairing->code, "Phone/1.0", "10.0.0.2");
  ASSERT_TRUE(paired.ok()) << paired.status().ToString();
  EXPECT_EQ(paired->device.name, "phone");
  EXPECT_EQ(paired->device.id.rfind("dev_", 0), 0u);
  EXPECT_TRUE(LooksLikeDeviceToken(paired->token));
  EXPECT_EQ(paired->device.user_agent, "Phone/1.0");
  // The store keeps the hash, never the token.
  EXPECT_EQ(log_.devices().GetDevice(paired->device.id)->token_hash, HashSecret(paired->token));

  auto again = service_.Exchange(pairing->code, "x", "10.0.0.3");
  EXPECT_EQ(again.status().code(), ErrorCode::kUnauthenticated);
  auto malformed = service_.Exchange("asp_nope", "x", "10.0.0.3");
  EXPECT_EQ(malformed.status().message(), again.status().message());
  auto expired_code = service_.CreatePairing("late", 10'000);
  now_ += 10'000;
  EXPECT_EQ(service_.Exchange(expired_code->code, "x", "10.0.0.3").status().message(),
            again.status().message());

  auto who = service_.Authenticate(paired->token, "Phone/1.0", "10.0.0.2");
  ASSERT_TRUE(who.ok());
  ASSERT_TRUE(who->has_value());
  EXPECT_EQ((*who)->id, paired->device.id);
  auto nobody = service_.Authenticate(NewDeviceToken(), "x", "10.0.0.2");
  ASSERT_TRUE(nobody.ok());
  EXPECT_FALSE(nobody->has_value());
}

TEST_F(DeviceServiceTest, CacheKeepsATokenFiveSecondsAndRevocationEvictsAtOnce) {
  const PairedDevice phone = Pair("phone");
  const int before = store_.lookups.load();
  ASSERT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());
  ASSERT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());
  EXPECT_EQ(store_.lookups.load(), before + 1);
  now_ += kCacheTtlMs - 1;
  ASSERT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());
  EXPECT_EQ(store_.lookups.load(), before + 1);
  now_ += 1;
  ASSERT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());
  EXPECT_EQ(store_.lookups.load(), before + 2);

  std::vector<std::string> heard;
  const int listener =
      service_.AddRevocationListener([&](const std::string& id) { heard.push_back(id); });
  auto revoked = service_.Revoke(phone.device.id);
  ASSERT_TRUE(revoked.ok());
  EXPECT_TRUE(revoked->revoked());
  EXPECT_EQ(heard, std::vector<std::string>{phone.device.id});
  EXPECT_FALSE(service_.Authenticate(phone.token, "", "a")->has_value());  // cached no more
  ASSERT_TRUE(service_.Revoke(phone.device.id).ok());                      // idempotent
  service_.PollOnce();
  EXPECT_EQ(heard.size(), 1u);  // told once
  service_.RemoveRevocationListener(listener);
}

TEST_F(DeviceServiceTest, RevocationByAnotherDaemonIsHeardAtThePoll) {
  const PairedDevice phone = Pair("phone");
  ASSERT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());  // cached
  std::vector<std::string> heard;
  service_.AddRevocationListener([&](const std::string& id) { heard.push_back(id); });
  // Another daemon writes the revocation straight to the shared store.
  ASSERT_TRUE(log_.devices().RevokeDevice(phone.device.id, now_ - 2000).ok());
  EXPECT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());  // still cached
  service_.PollOnce();
  EXPECT_EQ(heard, std::vector<std::string>{phone.device.id});
  EXPECT_FALSE(service_.Authenticate(phone.token, "", "a")->has_value());
  EXPECT_EQ(service_.cached_entries(), 0u);
}

TEST_F(DeviceServiceTest, TouchesAreThrottledAndWrittenByThePoll) {
  const PairedDevice phone = Pair("phone");
  service_.PollOnce();
  const int before = store_.touches.load();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(service_.Authenticate(phone.token, "UA/2", "a").ok());
  service_.PollOnce();
  EXPECT_EQ(store_.touches.load(), before + 1);
  EXPECT_EQ(log_.devices().GetDevice(phone.device.id)->user_agent, "UA/2");
  now_ += 29'999;
  ASSERT_TRUE(service_.Authenticate(phone.token, "UA/3", "a").ok());
  service_.PollOnce();
  EXPECT_EQ(store_.touches.load(), before + 1);
  now_ += 1;
  ASSERT_TRUE(service_.Authenticate(phone.token, "UA/3", "a").ok());
  service_.PollOnce();
  EXPECT_EQ(store_.touches.load(), before + 2);
  EXPECT_EQ(log_.devices().GetDevice(phone.device.id)->last_seen_ms, now_);
}

TEST_F(DeviceServiceTest, FailuresAreLimitedPerAddress) {
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(service_.Exchange("asp_bad", "", "10.9.9.9").status().code(),
              ErrorCode::kUnauthenticated);
  EXPECT_EQ(service_.Exchange("asp_bad", "", "10.9.9.9").status().code(),
            ErrorCode::kResourceExhausted);
  // Even a good code, from that address, until the window passes.
  auto pairing = service_.CreatePairing("phone", 600'000);
  EXPECT_EQ(service_.Exchange(pairing->code, "", "10.9.9.9").status().code(),
            ErrorCode::kResourceExhausted);
  EXPECT_EQ(service_.Authenticate(NewDeviceToken(), "", "10.9.9.9").status().code(),
            ErrorCode::kResourceExhausted);
  // Another address is not affected.
  EXPECT_TRUE(service_.Exchange(pairing->code, "", "10.1.1.1").ok());
  now_ += 60'000;
  EXPECT_EQ(service_.Exchange("asp_bad", "", "10.9.9.9").status().code(),
            ErrorCode::kUnauthenticated);
}

TEST_F(DeviceServiceTest, RenameValidatesAndUpdatesTheCache) {
  const PairedDevice phone = Pair("phone");
  EXPECT_EQ(service_.Rename(phone.device.id, "").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(service_.Rename("dev_none", "x").status().code(), ErrorCode::kNotFound);
  ASSERT_TRUE(service_.Authenticate(phone.token, "", "a")->has_value());
  auto renamed = service_.Rename(phone.device.id, "work phone");
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->name, "work phone");
  EXPECT_EQ((*service_.Authenticate(phone.token, "", "a"))->name, "work phone");
}

TEST_F(DeviceServiceTest, ThePollThreadRunsAndStops) {
  DeviceService threaded(store_, DeviceServiceOptions{.poll_interval_ms = 20});
  const PairedDevice phone = Pair("phone");
  std::atomic<int> heard{0};
  threaded.AddRevocationListener([&](const std::string&) { ++heard; });
  threaded.Start();
  ASSERT_TRUE(log_.devices().RevokeDevice(phone.device.id, system::WallClockMs()).ok());
  for (int i = 0; i < 200 && heard.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(heard.load(), 1);
  threaded.Stop();
}

}  // namespace
}  // namespace agentstream::devices

// The DeviceStore conformance suite (store/device_store.h): one-time pairing codes, paired
// devices and their revocation, notification settings, presence. Every backend passes it
// unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/test_backend.h"

namespace agentstream {
namespace {

// A 32-byte stand-in for a SHA-256, distinct per `tag` (the store compares hashes it is given).
std::string Hash(const std::string& tag) {
  std::string out(32, '\0');
  for (std::size_t i = 0; i < tag.size() && i < out.size(); ++i) out[i] = tag[i];
  out[31] = static_cast<char>(0xff);  // not text: stored as bytes
  return out;
}

DeviceRecord NewDevice(const std::string& id, TimestampMs created_ms = 1000) {
  DeviceRecord d;
  d.id = id;
  d.name = "ignored: the code's name is used";
  d.token_hash = Hash("token-" + id);
  d.created_ms = created_ms;
  return d;
}

PairingRecord NewPairing(const std::string& tag, const std::string& name, TimestampMs expires_ms) {
  return PairingRecord{Hash("code-" + tag), name, 1000, expires_ms};
}

class DeviceStoreConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(GetParam());
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
  }
  DeviceStore& devices() { return backend_->log().devices(); }

  // Pairs device `id` through a fresh code named `name`.
  DeviceRecord Pair(const std::string& id, const std::string& name, TimestampMs created_ms) {
    EXPECT_TRUE(devices().AddPairing(NewPairing(id, name, 1'000'000)).ok());
    auto paired = devices().UsePairing(Hash("code-" + id), NewDevice(id, created_ms), 2000);
    EXPECT_TRUE(paired.ok()) << paired.status().ToString();
    return paired.ok() ? *paired : DeviceRecord{};
  }

  std::unique_ptr<testing::Backend> backend_;
};

TEST_P(DeviceStoreConformance, ACodePairsOneDeviceWithItsName) {
  ASSERT_TRUE(devices().AddPairing(NewPairing("a", "phone", 10'000)).ok());
  EXPECT_EQ(devices().AddPairing(NewPairing("a", "other", 10'000)).code(),
            ErrorCode::kAlreadyExists);
  auto paired = devices().UsePairing(Hash("code-a"), NewDevice("dev_a"), 5000);
  ASSERT_TRUE(paired.ok()) << paired.status().ToString();
  EXPECT_EQ(paired->name, "phone");
  EXPECT_FALSE(paired->revoked());
  // Used: the same answer as an unknown code.
  auto again = devices().UsePairing(Hash("code-a"), NewDevice("dev_b"), 5000);
  EXPECT_EQ(again.status().code(), ErrorCode::kNotFound);
  auto unknown = devices().UsePairing(Hash("code-zz"), NewDevice("dev_c"), 5000);
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(again.status().message(), unknown.status().message());

  auto stored = devices().GetDevice("dev_a");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->name, "phone");
  EXPECT_EQ(stored->token_hash, Hash("token-dev_a"));
  EXPECT_EQ(stored->created_ms, 1000);
  auto found = devices().FindDeviceByToken(Hash("token-dev_a"));
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->id, "dev_a");
  EXPECT_FALSE(devices().FindDeviceByToken(Hash("token-none"))->has_value());
  EXPECT_EQ(devices().GetDevice("dev_none").status().code(), ErrorCode::kNotFound);
}

TEST_P(DeviceStoreConformance, ACodeUsedByTwoThreadsAtOncePairsExactlyOneDevice) {
  for (int round = 0; round < 5; ++round) {
    const std::string tag = "race" + std::to_string(round);
    ASSERT_TRUE(devices().AddPairing(NewPairing(tag, "raced", 1'000'000)).ok());
    std::atomic<int> paired{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        auto r = devices().UsePairing(Hash("code-" + tag),
                                      NewDevice("dev_" + tag + "_" + std::to_string(t)), 2000);
        if (r.ok())
          ++paired;
        else if (r.status().code() == ErrorCode::kNotFound)
          ++refused;
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(paired.load(), 1);
    EXPECT_EQ(refused.load(), 1);
  }
  EXPECT_EQ(devices().ListDevices()->size(), 5u);
}

TEST_P(DeviceStoreConformance, ExpiredCodesAreRefusedAndDeleted) {
  ASSERT_TRUE(devices().AddPairing(NewPairing("old", "phone", 5000)).ok());
  ASSERT_TRUE(devices().AddPairing(NewPairing("new", "tablet", 50'000)).ok());
  // Expired at its expiry time.
  auto late = devices().UsePairing(Hash("code-old"), NewDevice("dev_late"), 5000);
  EXPECT_EQ(late.status().code(), ErrorCode::kNotFound);
  // Deleted: the same hash can be stored again.
  EXPECT_TRUE(devices().AddPairing(NewPairing("old", "again", 90'000)).ok());
  auto fresh = devices().UsePairing(Hash("code-new"), NewDevice("dev_new"), 49'999);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->name, "tablet");
  auto reused = devices().UsePairing(Hash("code-old"), NewDevice("dev_again"), 6000);
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  EXPECT_EQ(reused->name, "again");
}

TEST_P(DeviceStoreConformance, ListRenameTouchAndSettings) {
  Pair("dev_2", "second", 2000);
  Pair("dev_1", "first", 1000);
  auto list = devices().ListDevices();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "dev_1");  // oldest first
  EXPECT_EQ((*list)[1].id, "dev_2");

  ASSERT_TRUE(devices().RenameDevice("dev_1", "laptop ✓").ok());
  EXPECT_EQ(devices().GetDevice("dev_1")->name, "laptop ✓");
  EXPECT_EQ(devices().RenameDevice("dev_9", "x").code(), ErrorCode::kNotFound);
  EXPECT_EQ(devices().RenameDevice("dev_1", "").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(devices().RenameDevice("dev_1", std::string(65, 'n')).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(devices().RenameDevice("dev_1", std::string("a\0b", 3)).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(devices().RenameDevice("dev_1", "\xff").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(devices().GetDevice("dev_1")->name, "laptop ✓");  // refused: unchanged

  ASSERT_TRUE(devices().TouchDevice("dev_1", 7000, "Firefox").ok());
  ASSERT_TRUE(devices().TouchDevice("dev_1", 6000, "Chrome").ok());  // never goes back
  auto touched = devices().GetDevice("dev_1");
  EXPECT_EQ(touched->last_seen_ms, 7000);
  EXPECT_EQ(touched->user_agent, "Chrome");
  EXPECT_EQ(devices().TouchDevice("dev_1", 1, std::string(257, 'u')).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(devices().TouchDevice("dev_9", 1, "x").code(), ErrorCode::kNotFound);

  ASSERT_TRUE(devices().SetDeviceSettings("dev_1", "{\"previews\":true}").ok());
  EXPECT_EQ(devices().GetDevice("dev_1")->settings, "{\"previews\":true}");
  EXPECT_EQ(devices().SetDeviceSettings("dev_9", "{}").code(), ErrorCode::kNotFound);
  EXPECT_EQ(devices().SetDeviceSettings("dev_1", std::string(16 * 1024 + 1, ' ')).code(),
            ErrorCode::kInvalidArgument);
}

TEST_P(DeviceStoreConformance, RevokeIsIdempotentAndFoundByRevokedSince) {
  Pair("dev_r", "phone", 1000);
  Pair("dev_k", "kept", 1000);
  ASSERT_TRUE(devices().SetDeviceSettings("dev_r", "{\"ntfy\":null}").ok());
  EXPECT_TRUE(devices().RevokedSince(0)->empty());
  ASSERT_TRUE(devices().RevokeDevice("dev_r", 10'000).ok());
  ASSERT_TRUE(devices().RevokeDevice("dev_r", 20'000).ok());  // keeps the first time
  auto revoked = devices().GetDevice("dev_r");
  ASSERT_TRUE(revoked.ok());
  EXPECT_TRUE(revoked->revoked());
  EXPECT_EQ(revoked->revoked_ms, 10'000);
  EXPECT_EQ(revoked->settings, "");  // cleared
  EXPECT_EQ(devices().SetDeviceSettings("dev_r", "{}").code(), ErrorCode::kConflict);
  EXPECT_EQ(devices().RevokeDevice("dev_9", 1).code(), ErrorCode::kNotFound);
  // Still found by its token (the caller refuses it) and listed.
  auto found = devices().FindDeviceByToken(Hash("token-dev_r"));
  ASSERT_TRUE(found.ok() && found->has_value());
  EXPECT_TRUE((*found)->revoked());
  EXPECT_EQ(devices().ListDevices()->size(), 2u);

  EXPECT_EQ(*devices().RevokedSince(10'000), std::vector<std::string>{"dev_r"});
  EXPECT_EQ(*devices().RevokedSince(0), std::vector<std::string>{"dev_r"});
  EXPECT_TRUE(devices().RevokedSince(10'001)->empty());
}

TEST_P(DeviceStoreConformance, PresenceExpires) {
  PresenceRecord a{"conn-a", "dev_a", true, "ses_1", 900, 5000};
  PresenceRecord b{"conn-b", "", false, "", 800, 3000};
  ASSERT_TRUE(devices().ReportPresence(a).ok());
  ASSERT_TRUE(devices().ReportPresence(b).ok());
  auto live = devices().ListPresence(2000);
  ASSERT_TRUE(live.ok());
  ASSERT_EQ(live->size(), 2u);
  EXPECT_EQ((*live)[0].client, "conn-a");
  EXPECT_TRUE((*live)[0].visible);
  EXPECT_EQ((*live)[0].focused_agent, "ses_1");
  EXPECT_EQ((*live)[0].device_id, "dev_a");
  EXPECT_EQ((*live)[0].last_activity_ms, 900);
  EXPECT_FALSE((*live)[1].visible);
  // conn-b expired at 3000.
  live = devices().ListPresence(3000);
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].client, "conn-a");
  // A report replaces the client's row.
  a.visible = false;
  a.expires_ms = 9000;
  ASSERT_TRUE(devices().ReportPresence(a).ok());
  live = devices().ListPresence(6000);
  ASSERT_EQ(live->size(), 1u);
  EXPECT_FALSE((*live)[0].visible);
  ASSERT_TRUE(devices().DropPresence("conn-a").ok());
  EXPECT_EQ(devices().ListPresence(0)->size(), 1u);  // conn-b, expired, still stored
  // A report a day past conn-b's expiry deletes its row.
  ASSERT_TRUE(
      devices().ReportPresence(PresenceRecord{"conn-c", "", true, "", 0, 3000 + 86'400'001}).ok());
  auto all = devices().ListPresence(0);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].client, "conn-c");
}

TEST_P(DeviceStoreConformance, SurvivesReopen) {
  Pair("dev_p", "persisted", 1000);
  ASSERT_TRUE(devices().AddPairing(NewPairing("later", "later", 1'000'000)).ok());
  backend_->Reopen();
  if (GetParam() == "memory") return;  // nothing survives the memory log
  EXPECT_EQ(devices().GetDevice("dev_p")->name, "persisted");
  EXPECT_TRUE(devices().UsePairing(Hash("code-later"), NewDevice("dev_l"), 2000).ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceStoreConformance,
                         ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace agentstream

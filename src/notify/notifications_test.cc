#include "notify/notifications.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "notify/notify_sink.h"
#include "store/memory_log.h"

namespace agentstream::notify {
namespace {

namespace json = boost::json;

// A device paired the way the daemon pairs one (a code used once).
std::string PairDevice(DeviceStore& devices, const std::string& id) {
  PairingRecord code{std::string(32, id.back()), "phone", 1, 1'000'000};
  EXPECT_TRUE(devices.AddPairing(code).ok());
  DeviceRecord device;
  device.id = id;
  device.token_hash = std::string(32, static_cast<char>(id.back() + 1));
  device.created_ms = 2;
  auto used = devices.UsePairing(code.code_hash, device, 3);
  EXPECT_TRUE(used.ok()) << used.status().ToString();
  return id;
}

bool HasConsumer(consumers::ConsumerService& service, const std::string& device) {
  auto got = service.Get(NotifyConsumerId(device));
  return got.ok();
}

TEST(NotificationsTest, SettingsWithATargetMakeTheDevicesConsumerAndRevocationEndsIt) {
  MemoryEventLog log;
  DeviceStore& devices = log.devices();
  auto key = VapidKeyFromSecret(std::string(64, '7'));
  ASSERT_TRUE(key.ok());
  consumers::ConsumerServiceOptions options;
  options.owner = "test";
  options.notify_sink_factory = MakeNotifySinkFactory(
      log, devices,
      std::make_shared<NotifySinkOptions>(NotifySinkOptions{*key, "mailto:x@y", "", "", {}}));
  consumers::ConsumerService service(log, options, nullptr);
  ASSERT_TRUE(service.Start().ok());
  Notifications notifications(devices, service, /*allow_http=*/false, push::VapidPublicKey(*key));
  const std::string a = PairDevice(devices, "dev_a");

  // No target: settings kept, no consumer.
  auto saved = notifications.Put(a, json::parse(R"({"previews":true})"));
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_FALSE(HasConsumer(service, a));
  EXPECT_TRUE(notifications.Get(a)->previews);

  // A target: the consumer, over the classified kinds, from now on; saving again is idempotent.
  const json::value ntfy = json::parse(R"({"ntfy":{"url":"https://ntfy.sh","topic":"t-1"}})");
  ASSERT_TRUE(notifications.Put(a, ntfy).ok());
  ASSERT_TRUE(notifications.Put(a, ntfy).ok());
  auto consumer = service.Get(NotifyConsumerId(a));
  ASSERT_TRUE(consumer.ok());
  EXPECT_EQ(consumer->spec.sink.kind, consumers::SinkKind::kNotify);
  EXPECT_EQ(consumer->spec.sink.device, a);
  EXPECT_TRUE(consumer->spec.from_now);
  EXPECT_EQ(consumer->spec.filter.kinds, ClassifiedEventKinds());

  // Refused settings change nothing.
  auto refused = notifications.Put(a, json::parse(R"({"ntfy":{"url":"http://x","topic":"t"}})"));
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(notifications.Get(a)->ntfy->url, "https://ntfy.sh");
  EXPECT_TRUE(HasConsumer(service, a));

  // Deleting the settings deletes the consumer.
  ASSERT_TRUE(notifications.Delete(a).ok());
  EXPECT_FALSE(HasConsumer(service, a));
  EXPECT_FALSE(notifications.Get(a)->has_target());

  // A revoked device: its consumer is swept, and its settings cannot be saved.
  ASSERT_TRUE(notifications.Put(a, ntfy).ok());
  ASSERT_TRUE(devices.RevokeDevice(a, 10).ok());
  ASSERT_TRUE(notifications.Sweep().ok());
  EXPECT_FALSE(HasConsumer(service, a));
  EXPECT_EQ(notifications.Put(a, ntfy).status().code(), ErrorCode::kConflict);
  EXPECT_EQ(notifications.Get("dev_nope").status().code(), ErrorCode::kNotFound);
  service.Stop();
}

}  // namespace
}  // namespace agentstream::notify

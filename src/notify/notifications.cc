#include "notify/notifications.h"

#include <sodium.h>

#include <array>
#include <boost/json.hpp>
#include <utility>

#include "notify/classify.h"

namespace agentstream::notify {

namespace {

namespace json = boost::json;

constexpr std::string_view kConsumerPrefix = "notify.";

// Deleting a consumer that is not there is fine.
Status DeleteConsumer(consumers::ConsumerService& consumers, const std::string& device) {
  Status s = consumers.Delete(NotifyConsumerId(device));
  if (!s.ok() && s.code() != ErrorCode::kNotFound) return s;
  return Status::Ok();
}

}  // namespace

Result<push::VapidKey> VapidKeyFromSecret(std::string_view hex) {
  if (sodium_init() < 0) return Error(ErrorCode::kInternal, "libsodium failed to initialize");
  std::array<unsigned char, 32> scalar{};
  std::size_t length = 0;
  if (hex.size() != scalar.size() * 2 ||
      sodium_hex2bin(scalar.data(), scalar.size(), hex.data(), hex.size(), nullptr, &length,
                     nullptr) != 0 ||
      length != scalar.size())
    return Error(ErrorCode::kInvalidArgument, "the VAPID secret is not 64 hex characters");
  std::array<char, sodium_base64_ENCODED_LEN(32, sodium_base64_VARIANT_URLSAFE_NO_PADDING)> text{};
  sodium_bin2base64(text.data(), text.size(), scalar.data(), scalar.size(),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sodium_memzero(scalar.data(), scalar.size());
  auto key = push::VapidKeyFromText(text.data());
  sodium_memzero(text.data(), text.size());
  return key;
}

ConsumerId NotifyConsumerId(const std::string& device) {
  return ConsumerId(std::string(kConsumerPrefix) + device);
}

consumers::ConsumerSpec NotifyConsumerSpec(const std::string& device) {
  consumers::ConsumerSpec spec;
  spec.id = NotifyConsumerId(device);
  spec.filter.kinds = ClassifiedEventKinds();
  spec.sink.kind = consumers::SinkKind::kNotify;
  spec.sink.device = device;
  spec.sink.timeout_ms = kSendTimeoutMs;
  spec.coalesce = false;
  spec.from_now = true;
  return spec;
}

Notifications::Notifications(DeviceStore& devices, consumers::ConsumerService& consumers,
                             bool allow_http, std::string vapid_public_key)
    : devices_(devices),
      consumers_(consumers),
      allow_http_(allow_http),
      vapid_public_key_(std::move(vapid_public_key)) {}

Result<Settings> Notifications::Get(const std::string& device) {
  AS_ASSIGN_OR_RETURN(DeviceRecord record, devices_.GetDevice(device));
  return SettingsFromStored(record.settings);
}

Result<Settings> Notifications::Put(const std::string& device, const json::value& body) {
  AS_ASSIGN_OR_RETURN(Settings settings, SettingsFromJson(body, allow_http_));
  AS_ASSIGN_OR_RETURN(DeviceRecord record, devices_.GetDevice(device));
  if (record.revoked()) return Error(ErrorCode::kConflict, "the device " + device + " is revoked");
  AS_RETURN_IF_ERROR(devices_.SetDeviceSettings(device, json::serialize(SettingsToJson(settings))));
  if (settings.has_target()) {
    // kAlreadyExists: a consumer made by another version keeps its position and goes on.
    Status created = consumers_.Create(NotifyConsumerSpec(device)).status();
    if (!created.ok() && created.code() != ErrorCode::kAlreadyExists) return created;
  } else {
    AS_RETURN_IF_ERROR(DeleteConsumer(consumers_, device));
  }
  return settings;
}

Status Notifications::Delete(const std::string& device) {
  AS_ASSIGN_OR_RETURN(DeviceRecord record, devices_.GetDevice(device));
  if (!record.revoked() && !record.settings.empty())
    AS_RETURN_IF_ERROR(devices_.SetDeviceSettings(device, ""));
  return DeleteConsumer(consumers_, device);
}

Status Notifications::Forget(const std::string& device) {
  return DeleteConsumer(consumers_, device);
}

Status Notifications::Sweep() {
  AS_ASSIGN_OR_RETURN(std::vector<consumers::ConsumerState> all, consumers_.List());
  for (const consumers::ConsumerState& state : all) {
    if (state.spec.sink.kind != consumers::SinkKind::kNotify) continue;
    const std::string& device = state.spec.sink.device;
    auto record = devices_.GetDevice(device);
    if (!record.ok() && record.status().code() != ErrorCode::kNotFound) return record.status();
    if (record.ok() && !record->revoked() && SettingsFromStored(record->settings).has_target())
      continue;
    Status deleted = consumers_.Delete(state.spec.id);
    if (!deleted.ok() && deleted.code() != ErrorCode::kNotFound) return deleted;
  }
  return Status::Ok();
}

}  // namespace agentstream::notify

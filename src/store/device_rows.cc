#include "store/device_rows.h"

#include "store/row_text.h"

namespace agentstream::store_internal {
namespace {

Status CheckHash(const std::string& what, const std::string& hash) {
  if (hash.size() != kDeviceHashBytes)
    return Error(ErrorCode::kInvalidArgument,
                 what + " must be a SHA-256 of " + std::to_string(kDeviceHashBytes) + " bytes");
  return Status::Ok();
}

}  // namespace

Status CheckDeviceName(const std::string& name) {
  return CheckRowText("a device name", name, 1, kMaxDeviceNameBytes);
}

Status CheckUserAgent(const std::string& user_agent) {
  return CheckRowText("a user agent", user_agent, 0, kMaxUserAgentBytes);
}

Status CheckDeviceSettings(const std::string& settings) {
  return CheckRowText("device settings", settings, 0, kMaxDeviceSettingsBytes);
}

Status CheckPairingRow(const PairingRecord& pairing) {
  AS_RETURN_IF_ERROR(CheckHash("a pairing code hash", pairing.code_hash));
  return CheckDeviceName(pairing.name);
}

Status CheckDeviceRow(const DeviceRecord& device) {
  AS_RETURN_IF_ERROR(CheckRowText("a device id", device.id, 1, kMaxDeviceIdBytes));
  AS_RETURN_IF_ERROR(CheckHash("a device token hash", device.token_hash));
  AS_RETURN_IF_ERROR(CheckUserAgent(device.user_agent));
  return CheckDeviceSettings(device.settings);
}

Status CheckPresenceRow(const PresenceRecord& presence) {
  AS_RETURN_IF_ERROR(CheckRowText("a presence client", presence.client, 1, kMaxDeviceIdBytes));
  AS_RETURN_IF_ERROR(CheckRowText("a presence device", presence.device_id, 0, kMaxDeviceIdBytes));
  return CheckRowText("a focused agent", presence.focused_agent, 0, kMaxDeviceIdBytes);
}

Status PairingCodeRefused() {
  return Error(ErrorCode::kNotFound, "the pairing code is unknown, used or expired");
}

}  // namespace agentstream::store_internal

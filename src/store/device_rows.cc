#include "store/device_rows.h"

#include "core/utf8.h"

namespace agentstream::store_internal {
namespace {

Status CheckText(const std::string& what, const std::string& text, std::size_t min_bytes,
                 std::size_t max_bytes) {
  if (text.size() < min_bytes || text.size() > max_bytes)
    return Error(ErrorCode::kInvalidArgument, what + " must be " + std::to_string(min_bytes) +
                                                  " to " + std::to_string(max_bytes) + " bytes");
  if (text.find('\0') != std::string::npos || !IsValidUtf8(text))
    return Error(ErrorCode::kInvalidArgument, what + " must be UTF-8 text without NUL bytes");
  return Status::Ok();
}

Status CheckHash(const std::string& what, const std::string& hash) {
  if (hash.size() != kDeviceHashBytes)
    return Error(ErrorCode::kInvalidArgument,
                 what + " must be a SHA-256 of " + std::to_string(kDeviceHashBytes) + " bytes");
  return Status::Ok();
}

}  // namespace

Status CheckDeviceName(const std::string& name) {
  return CheckText("a device name", name, 1, kMaxDeviceNameBytes);
}

Status CheckUserAgent(const std::string& user_agent) {
  return CheckText("a user agent", user_agent, 0, kMaxUserAgentBytes);
}

Status CheckDeviceSettings(const std::string& settings) {
  return CheckText("device settings", settings, 0, kMaxDeviceSettingsBytes);
}

Status CheckPairingRow(const PairingRecord& pairing) {
  AS_RETURN_IF_ERROR(CheckHash("a pairing code hash", pairing.code_hash));
  return CheckDeviceName(pairing.name);
}

Status CheckDeviceRow(const DeviceRecord& device) {
  AS_RETURN_IF_ERROR(CheckText("a device id", device.id, 1, kMaxDeviceIdBytes));
  AS_RETURN_IF_ERROR(CheckHash("a device token hash", device.token_hash));
  AS_RETURN_IF_ERROR(CheckUserAgent(device.user_agent));
  return CheckDeviceSettings(device.settings);
}

Status CheckPresenceRow(const PresenceRecord& presence) {
  AS_RETURN_IF_ERROR(CheckText("a presence client", presence.client, 1, kMaxDeviceIdBytes));
  AS_RETURN_IF_ERROR(CheckText("a presence device", presence.device_id, 0, kMaxDeviceIdBytes));
  return CheckText("a focused agent", presence.focused_agent, 0, kMaxDeviceIdBytes);
}

Status PairingCodeRefused() {
  return Error(ErrorCode::kNotFound, "the pairing code is unknown, used or expired");
}

}  // namespace agentstream::store_internal

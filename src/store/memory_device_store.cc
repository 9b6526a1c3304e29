#include "store/memory_device_store.h"

#include <algorithm>
#include <utility>

#include "store/device_rows.h"

namespace agentstream::store_internal {

Result<DeviceRecord*> MemoryDeviceStore::Find(const std::string& id) {
  auto it = devices_.find(id);
  if (it == devices_.end()) return Error(ErrorCode::kNotFound, "no device " + id);
  return &it->second;
}

Status MemoryDeviceStore::AddPairing(const PairingRecord& pairing) {
  AS_RETURN_IF_ERROR(CheckPairingRow(pairing));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  if (!pairings_.emplace(pairing.code_hash, pairing).second)
    return Error(ErrorCode::kAlreadyExists, "the pairing code is already stored");
  return Status::Ok();
}

Result<DeviceRecord> MemoryDeviceStore::UsePairing(const std::string& code_hash,
                                                   DeviceRecord device, TimestampMs now_ms) {
  AS_RETURN_IF_ERROR(CheckDeviceRow(device));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  std::erase_if(pairings_, [&](const auto& entry) { return entry.second.expires_ms <= now_ms; });
  auto it = pairings_.find(code_hash);
  if (it == pairings_.end()) return PairingCodeRefused();
  if (devices_.count(device.id))
    return Error(ErrorCode::kAlreadyExists, "a device " + device.id + " exists");
  for (const auto& [id, other] : devices_)
    if (other.token_hash == device.token_hash)
      return Error(ErrorCode::kAlreadyExists, "the device token is already stored");
  device.name = it->second.name;
  pairings_.erase(it);
  devices_[device.id] = device;
  return device;
}

Result<std::vector<DeviceRecord>> MemoryDeviceStore::ListDevices() {
  std::lock_guard lock(log_.mu);
  std::vector<DeviceRecord> out;
  out.reserve(devices_.size());
  for (const auto& [id, device] : devices_) out.push_back(device);
  std::stable_sort(out.begin(), out.end(), [](const DeviceRecord& a, const DeviceRecord& b) {
    return a.created_ms < b.created_ms;
  });
  return out;
}

Result<DeviceRecord> MemoryDeviceStore::GetDevice(const std::string& id) {
  std::lock_guard lock(log_.mu);
  AS_ASSIGN_OR_RETURN(DeviceRecord * device, Find(id));
  return *device;
}

Result<std::optional<DeviceRecord>> MemoryDeviceStore::FindDeviceByToken(
    const std::string& token_hash) {
  std::lock_guard lock(log_.mu);
  for (const auto& [id, device] : devices_)
    if (device.token_hash == token_hash) return std::optional<DeviceRecord>(device);
  return std::optional<DeviceRecord>();
}

Status MemoryDeviceStore::RenameDevice(const std::string& id, const std::string& name) {
  AS_RETURN_IF_ERROR(CheckDeviceName(name));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(DeviceRecord * device, Find(id));
  device->name = name;
  return Status::Ok();
}

Status MemoryDeviceStore::RevokeDevice(const std::string& id, TimestampMs now_ms) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(DeviceRecord * device, Find(id));
  if (device->revoked_ms == 0) device->revoked_ms = now_ms;
  device->settings.clear();
  return Status::Ok();
}

Status MemoryDeviceStore::TouchDevice(const std::string& id, TimestampMs seen_ms,
                                      const std::string& user_agent) {
  AS_RETURN_IF_ERROR(CheckUserAgent(user_agent));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(DeviceRecord * device, Find(id));
  device->last_seen_ms = std::max(device->last_seen_ms, seen_ms);
  device->user_agent = user_agent;
  return Status::Ok();
}

Status MemoryDeviceStore::SetDeviceSettings(const std::string& id, const std::string& settings) {
  AS_RETURN_IF_ERROR(CheckDeviceSettings(settings));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  AS_ASSIGN_OR_RETURN(DeviceRecord * device, Find(id));
  if (device->revoked()) return Error(ErrorCode::kConflict, "device " + id + " is revoked");
  device->settings = settings;
  return Status::Ok();
}

Result<std::vector<std::string>> MemoryDeviceStore::RevokedSince(TimestampMs since_ms) {
  std::lock_guard lock(log_.mu);
  std::vector<std::string> out;
  for (const auto& [id, device] : devices_)
    if (device.revoked() && device.revoked_ms >= since_ms) out.push_back(id);
  return out;
}

Status MemoryDeviceStore::ReportPresence(const PresenceRecord& presence) {
  AS_RETURN_IF_ERROR(CheckPresenceRow(presence));
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  std::erase_if(presence_, [&](const auto& entry) {
    return entry.second.expires_ms < presence.expires_ms - kPresenceRetentionMs;
  });
  presence_[presence.client] = presence;
  return Status::Ok();
}

Status MemoryDeviceStore::DropPresence(const std::string& client) {
  std::lock_guard lock(log_.mu);
  AS_RETURN_IF_ERROR(log_.CheckWritable());
  presence_.erase(client);
  return Status::Ok();
}

Result<std::vector<PresenceRecord>> MemoryDeviceStore::ListPresence(TimestampMs now_ms) {
  std::lock_guard lock(log_.mu);
  std::vector<PresenceRecord> out;
  for (const auto& [client, row] : presence_)
    if (row.expires_ms > now_ms) out.push_back(row);
  return out;
}

}  // namespace agentstream::store_internal

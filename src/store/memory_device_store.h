// Internal to the store module: the DeviceStore (device_store.h) of MemoryEventLog. Its rows live
// beside the log's and under the log's lock, so a log that turned sticky refuses these writes
// too. Thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "store/device_store.h"
#include "store/memory_log_state.h"

namespace agentstream::store_internal {

class MemoryDeviceStore final : public DeviceStore {
 public:
  // `log` must outlive the store.
  explicit MemoryDeviceStore(MemoryLogState& log) : log_(log) {}

  Status AddPairing(const PairingRecord& pairing) override;
  Result<DeviceRecord> UsePairing(const std::string& code_hash, DeviceRecord device,
                                  TimestampMs now_ms) override;
  Result<std::vector<DeviceRecord>> ListDevices() override;
  Result<DeviceRecord> GetDevice(const std::string& id) override;
  Result<std::optional<DeviceRecord>> FindDeviceByToken(const std::string& token_hash) override;
  Status RenameDevice(const std::string& id, const std::string& name) override;
  Status RevokeDevice(const std::string& id, TimestampMs now_ms) override;
  Status TouchDevice(const std::string& id, TimestampMs seen_ms,
                     const std::string& user_agent) override;
  Status SetDeviceSettings(const std::string& id, const std::string& settings) override;
  Result<std::vector<std::string>> RevokedSince(TimestampMs since_ms) override;
  Status ReportPresence(const PresenceRecord& presence) override;
  Status DropPresence(const std::string& client) override;
  Result<std::vector<PresenceRecord>> ListPresence(TimestampMs now_ms) override;

 private:
  // The device `id`, or kNotFound; with log_.mu held.
  Result<DeviceRecord*> Find(const std::string& id);

  MemoryLogState& log_;
  // Guarded by log_.mu.
  std::map<std::string, PairingRecord> pairings_;   // by code hash
  std::map<std::string, DeviceRecord> devices_;     // by id
  std::map<std::string, PresenceRecord> presence_;  // by client
};

}  // namespace agentstream::store_internal

// Internal to the store module: the DeviceStore (device_store.h) of the SQLite log, over the
// tables `pairings`, `devices` and `presence`. Writes run on the log's writer thread inside its
// batch transaction (so a sticky log refuses them too, and a pairing code is used once: one
// writer); reads on a reader connection. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/device_store.h"
#include "store/sqlite/sqlite_reader.h"
#include "store/sqlite/sqlite_writer.h"

namespace agentstream::sqlite {

class SqliteDeviceStore final : public DeviceStore {
 public:
  // `queue` and `readers` are the log's; both must outlive the store.
  SqliteDeviceStore(WriteQueue& queue, ReaderPool& readers) : queue_(queue), readers_(readers) {}

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
  // Runs `body(Writer&)` in the writer's batch.
  template <class Body>
  Status Write(Body body);

  WriteQueue& queue_;
  ReaderPool& readers_;
};

}  // namespace agentstream::sqlite

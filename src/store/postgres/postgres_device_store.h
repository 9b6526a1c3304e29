// Internal to the store module: the DeviceStore (device_store.h) of the PostgreSQL log, over the
// tables `pairings`, `devices` and `presence` that the daemons sharing the database share. Writes
// run in the log's writer batch (so a sticky log refuses them too); a pairing code is consumed by
// a DELETE ... RETURNING, so when two daemons are given one code at once exactly one of them
// deletes its row and pairs a device. Reads run on a reader connection. Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pg/setup.h"
#include "store/device_store.h"
#include "store/postgres/txn.h"

namespace agentstream::pg {

class PostgresDeviceStore final : public DeviceStore {
 public:
  // `queue` and `readers` are the log's; both must outlive the store.
  PostgresDeviceStore(WriteQueue& queue, ReaderPool& readers) : queue_(queue), readers_(readers) {}

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
  // Runs `body(Txn&)` in the writer's batch.
  template <class Body>
  Status Write(Body body);
  // The devices `where` selects, oldest first.
  Result<std::vector<DeviceRecord>> Select(const std::string& where, std::vector<Param> params);

  WriteQueue& queue_;
  ReaderPool& readers_;
};

}  // namespace agentstream::pg

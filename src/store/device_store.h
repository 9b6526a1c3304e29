// DeviceStore: the devices paired with the daemon (a phone, a second laptop), the one-time
// pairing codes that pair them, each device's notification settings, and the presence the
// daemon's clients report. Kept in the log's store, so every daemon sharing a PostgreSQL store
// knows every device, and a device revoked through one daemon is refused by all of them
// (docs/remote.md).
//
// Secrets are never stored: a pairing code and a device token are kept as their SHA-256 (the
// caller hashes; the store compares the hashes it is given). Both are 128 bits or more of
// randomness, so a hash cannot be reversed by guessing.
//
// Threading: every method may be called from any thread and blocks for one store round trip.
// Errors: kNotFound for an unknown device, kUnavailable / kIoError as the log's writes,
// kInvalidArgument for text the store cannot hold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/status.h"

namespace agentstream {

// A paired device, as stored.
struct DeviceRecord {
  std::string id;          // "dev_" + random id; never reused
  std::string name;        // shown in `devices ls` and the page; 1 to 64 bytes of UTF-8
  std::string token_hash;  // SHA-256 of the device token, 32 raw bytes
  TimestampMs created_ms = 0;
  TimestampMs last_seen_ms = 0;  // the last request attributed to it (0: never used)
  std::string user_agent;        // of that request, at most 256 bytes
  TimestampMs revoked_ms = 0;    // 0 while the device may connect
  // The device's notification settings (docs/remote.md, "Notifications"), a JSON object as text
  // owned by the notifications module; "" when none were set. At most 16 KiB.
  std::string settings;

  bool revoked() const { return revoked_ms != 0; }
};

// A one-time pairing code, as stored.
struct PairingRecord {
  std::string code_hash;  // SHA-256 of the code, 32 raw bytes
  std::string name;       // the name the device gets when the code is used
  TimestampMs created_ms = 0;
  TimestampMs expires_ms = 0;
};

// What one client last reported of itself (a WebSocket `heartbeat`): used to route
// notifications only, never to gate delivery. A row expires at `expires_ms`, so a client that
// stops sending (a suspended phone) stops counting.
struct PresenceRecord {
  std::string client;         // the connection's id, unique across daemons
  std::string device_id;      // the paired device the connection belongs to, "" for the owner
  bool visible = false;       // the page is visible
  std::string focused_agent;  // the agent the client shows in front, "" for none
  TimestampMs last_activity_ms = 0;  // the person's last input, by the reporting daemon's clock
  TimestampMs expires_ms = 0;        // by the reporting daemon's clock
};

class DeviceStore {
 public:
  virtual ~DeviceStore() = default;

  // ---- Pairing codes ----
  // Stores a new code. kAlreadyExists for a hash already stored.
  virtual Status AddPairing(const PairingRecord& pairing) = 0;
  // Consumes the code whose hash is `code_hash` and creates `device` (its name taken from the
  // code's), in one transaction: a code pairs at most one device, also when two daemons are
  // given it at once. kNotFound when no such code exists, it was used, or it expired at `now_ms`
  // (one answer for the three, so an attacker learns nothing). Expired codes are deleted.
  virtual Result<DeviceRecord> UsePairing(const std::string& code_hash, DeviceRecord device,
                                          TimestampMs now_ms) = 0;

  // ---- Devices ----
  // Every device, revoked ones included, oldest first.
  virtual Result<std::vector<DeviceRecord>> ListDevices() = 0;
  virtual Result<DeviceRecord> GetDevice(const std::string& id) = 0;
  // The device whose token hash is `token_hash`, or nullopt (revoked devices included: the
  // caller refuses them).
  virtual Result<std::optional<DeviceRecord>> FindDeviceByToken(const std::string& token_hash) = 0;
  virtual Status RenameDevice(const std::string& id, const std::string& name) = 0;
  // Sets revoked_ms (once: revoking again keeps the first time) and clears the settings.
  virtual Status RevokeDevice(const std::string& id, TimestampMs now_ms) = 0;
  // Records a request of the device (throttled by the caller).
  virtual Status TouchDevice(const std::string& id, TimestampMs seen_ms,
                             const std::string& user_agent) = 0;
  // kNotFound for an unknown device, kConflict for a revoked one.
  virtual Status SetDeviceSettings(const std::string& id, const std::string& settings) = 0;
  // The ids of the devices revoked at or after `since_ms`, so every daemon closes their
  // connections (polled).
  virtual Result<std::vector<std::string>> RevokedSince(TimestampMs since_ms) = 0;

  // ---- Presence ----
  // Inserts or replaces the row of `presence.client`, and deletes rows expired before
  // `presence.expires_ms` minus a day.
  virtual Status ReportPresence(const PresenceRecord& presence) = 0;
  virtual Status DropPresence(const std::string& client) = 0;
  // The rows not expired at `now_ms`.
  virtual Result<std::vector<PresenceRecord>> ListPresence(TimestampMs now_ms) = 0;
};

}  // namespace agentstream

#include "store/sqlite/sqlite_device_store.h"

#include <sqlite3.h>

#include <utility>

#include "store/device_rows.h"

namespace agentstream::sqlite {

namespace {

constexpr const char* kDeviceColumns =
    "id, name, token_hash, created_ms, last_seen_ms, user_agent, revoked_ms, settings";

DeviceRecord DeviceOf(const Stmt& s) {
  return DeviceRecord{s.Text(0), s.Text(1), s.Text(2), s.Int(3),
                      s.Int(4),  s.Text(5), s.Int(6),  s.Text(7)};
}

// The devices `where` selects (with `bind` binding its parameters), oldest first.
template <class Bind>
Result<std::vector<DeviceRecord>> SelectDevices(Db& db, const std::string& where, Bind bind) {
  AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare(std::string("SELECT ") + kDeviceColumns +
                                         " FROM devices " + where + " ORDER BY created_ms, id"));
  bind(s);
  std::vector<DeviceRecord> out;
  while (true) {
    AS_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(DeviceOf(s));
  }
  return out;
}

// True when a row `where` selects exists.
template <class Bind>
Result<bool> Exists(Db& db, const std::string& sql, Bind bind) {
  AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare(sql));
  bind(s);
  return s.Step();
}

// Runs an UPDATE of device `id` (its parameter 1); kNotFound when no row changed.
template <class Bind>
Status UpdateDevice(Writer& w, const std::string& id, const std::string& sql, Bind bind) {
  AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare(sql));
  s.Bind(1, id);
  bind(s);
  AS_RETURN_IF_ERROR(w.Check(s.Exec()));
  if (sqlite3_changes(w.db().raw()) == 0) return Error(ErrorCode::kNotFound, "no device " + id);
  return Status::Ok();
}

}  // namespace

template <class Body>
Status SqliteDeviceStore::Write(Body body) {
  return queue_.RunControl<bool>([&](Writer& w, bool&) -> Status { return body(w); }).status();
}

Status SqliteDeviceStore::AddPairing(const PairingRecord& pairing) {
  AS_RETURN_IF_ERROR(store_internal::CheckPairingRow(pairing));
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(bool exists, Exists(w.db(), "SELECT 1 FROM pairings WHERE code_hash=?",
                                            [&](Stmt& s) { s.BindBlob(1, pairing.code_hash); }));
    if (exists) return Error(ErrorCode::kAlreadyExists, "the pairing code is already stored");
    AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("INSERT INTO pairings(code_hash, name, created_ms, "
                                               "expires_ms) VALUES(?,?,?,?)"));
    s.BindBlob(1, pairing.code_hash).Bind(2, pairing.name).Bind(3, pairing.created_ms);
    s.Bind(4, pairing.expires_ms);
    return w.Check(s.Exec());
  });
}

Result<DeviceRecord> SqliteDeviceStore::UsePairing(const std::string& code_hash,
                                                   DeviceRecord device, TimestampMs now_ms) {
  AS_RETURN_IF_ERROR(store_internal::CheckDeviceRow(device));
  return queue_.RunControl<DeviceRecord>([&](Writer& w, DeviceRecord& out) -> Status {
    AS_ASSIGN_OR_RETURN(Stmt expired, w.db().Prepare("DELETE FROM pairings WHERE expires_ms<=?"));
    expired.Bind(1, now_ms);
    AS_RETURN_IF_ERROR(w.Check(expired.Exec()));
    AS_ASSIGN_OR_RETURN(Stmt find, w.db().Prepare("SELECT name FROM pairings WHERE code_hash=?"));
    find.BindBlob(1, code_hash);
    AS_ASSIGN_OR_RETURN(bool found, find.Step());
    if (!found) return store_internal::PairingCodeRefused();
    device.name = find.Text(0);
    find.Reset();
    AS_ASSIGN_OR_RETURN(
        bool taken, Exists(w.db(), "SELECT 1 FROM devices WHERE id=? OR token_hash=?",
                           [&](Stmt& s) { s.Bind(1, device.id).BindBlob(2, device.token_hash); }));
    if (taken) return Error(ErrorCode::kAlreadyExists, "the device id or token is already stored");
    AS_ASSIGN_OR_RETURN(Stmt used, w.db().Prepare("DELETE FROM pairings WHERE code_hash=?"));
    used.BindBlob(1, code_hash);
    AS_RETURN_IF_ERROR(w.Check(used.Exec()));
    AS_ASSIGN_OR_RETURN(Stmt insert, w.db().Prepare(std::string("INSERT INTO devices(") +
                                                    kDeviceColumns + ") VALUES(?,?,?,?,?,?,?,?)"));
    insert.Bind(1, device.id).Bind(2, device.name).BindBlob(3, device.token_hash);
    insert.Bind(4, device.created_ms).Bind(5, device.last_seen_ms).Bind(6, device.user_agent);
    insert.Bind(7, device.revoked_ms).Bind(8, device.settings);
    AS_RETURN_IF_ERROR(w.Check(insert.Exec()));
    out = device;
    return Status::Ok();
  });
}

Result<std::vector<DeviceRecord>> SqliteDeviceStore::ListDevices() {
  using Devices = std::vector<DeviceRecord>;
  return readers_.Query<Devices>([&](Db& db) { return SelectDevices(db, "", [](Stmt&) {}); });
}

Result<DeviceRecord> SqliteDeviceStore::GetDevice(const std::string& id) {
  AS_ASSIGN_OR_RETURN(auto found, readers_.Query<std::vector<DeviceRecord>>([&](Db& db) {
    return SelectDevices(db, "WHERE id=?", [&](Stmt& s) { s.Bind(1, id); });
  }));
  if (found.empty()) return Error(ErrorCode::kNotFound, "no device " + id);
  return std::move(found.front());
}

Result<std::optional<DeviceRecord>> SqliteDeviceStore::FindDeviceByToken(
    const std::string& token_hash) {
  AS_ASSIGN_OR_RETURN(auto found, readers_.Query<std::vector<DeviceRecord>>([&](Db& db) {
    return SelectDevices(db, "WHERE token_hash=?", [&](Stmt& s) { s.BindBlob(1, token_hash); });
  }));
  if (found.empty()) return std::optional<DeviceRecord>();
  return std::optional<DeviceRecord>(std::move(found.front()));
}

Status SqliteDeviceStore::RenameDevice(const std::string& id, const std::string& name) {
  AS_RETURN_IF_ERROR(store_internal::CheckDeviceName(name));
  return Write([&](Writer& w) {
    return UpdateDevice(w, id, "UPDATE devices SET name=?2 WHERE id=?1",
                        [&](Stmt& s) { s.Bind(2, name); });
  });
}

Status SqliteDeviceStore::RevokeDevice(const std::string& id, TimestampMs now_ms) {
  return Write([&](Writer& w) {
    return UpdateDevice(w, id,
                        "UPDATE devices SET revoked_ms=CASE WHEN revoked_ms=0 THEN ?2 ELSE "
                        "revoked_ms END, settings='' WHERE id=?1",
                        [&](Stmt& s) { s.Bind(2, now_ms); });
  });
}

Status SqliteDeviceStore::TouchDevice(const std::string& id, TimestampMs seen_ms,
                                      const std::string& user_agent) {
  AS_RETURN_IF_ERROR(store_internal::CheckUserAgent(user_agent));
  return Write([&](Writer& w) {
    return UpdateDevice(w, id,
                        "UPDATE devices SET last_seen_ms=max(last_seen_ms, ?2), user_agent=?3 "
                        "WHERE id=?1",
                        [&](Stmt& s) { s.Bind(2, seen_ms).Bind(3, user_agent); });
  });
}

Status SqliteDeviceStore::SetDeviceSettings(const std::string& id, const std::string& settings) {
  AS_RETURN_IF_ERROR(store_internal::CheckDeviceSettings(settings));
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(bool revoked,
                        Exists(w.db(), "SELECT 1 FROM devices WHERE id=? AND revoked_ms<>0",
                               [&](Stmt& s) { s.Bind(1, id); }));
    if (revoked) return Error(ErrorCode::kConflict, "device " + id + " is revoked");
    return UpdateDevice(w, id, "UPDATE devices SET settings=?2 WHERE id=?1",
                        [&](Stmt& s) { s.Bind(2, settings); });
  });
}

Result<std::vector<std::string>> SqliteDeviceStore::RevokedSince(TimestampMs since_ms) {
  using Ids = std::vector<std::string>;
  return readers_.Query<Ids>([&](Db& db) -> Result<Ids> {
    AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT id FROM devices WHERE revoked_ms<>0 AND "
                                           "revoked_ms>=? ORDER BY id"));
    s.Bind(1, since_ms);
    Ids out;
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(s.Text(0));
    }
    return out;
  });
}

Status SqliteDeviceStore::ReportPresence(const PresenceRecord& p) {
  AS_RETURN_IF_ERROR(store_internal::CheckPresenceRow(p));
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(Stmt old, w.db().Prepare("DELETE FROM presence WHERE expires_ms<?"));
    old.Bind(1, p.expires_ms - store_internal::kPresenceRetentionMs);
    AS_RETURN_IF_ERROR(w.Check(old.Exec()));
    AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("INSERT OR REPLACE INTO presence(client, device_id, "
                                               "visible, focused_agent, last_activity_ms, "
                                               "expires_ms) VALUES(?,?,?,?,?,?)"));
    s.Bind(1, p.client).Bind(2, p.device_id).Bind(3, p.visible ? 1 : 0).Bind(4, p.focused_agent);
    s.Bind(5, p.last_activity_ms).Bind(6, p.expires_ms);
    return w.Check(s.Exec());
  });
}

Status SqliteDeviceStore::DropPresence(const std::string& client) {
  return Write([&](Writer& w) -> Status {
    AS_ASSIGN_OR_RETURN(Stmt s, w.db().Prepare("DELETE FROM presence WHERE client=?"));
    s.Bind(1, client);
    return w.Check(s.Exec());
  });
}

Result<std::vector<PresenceRecord>> SqliteDeviceStore::ListPresence(TimestampMs now_ms) {
  using Rows = std::vector<PresenceRecord>;
  return readers_.Query<Rows>([&](Db& db) -> Result<Rows> {
    AS_ASSIGN_OR_RETURN(Stmt s, db.Prepare("SELECT client, device_id, visible, focused_agent, "
                                           "last_activity_ms, expires_ms FROM presence WHERE "
                                           "expires_ms>? ORDER BY client"));
    s.Bind(1, now_ms);
    Rows out;
    while (true) {
      AS_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out.push_back(
          PresenceRecord{s.Text(0), s.Text(1), s.Int(2) != 0, s.Text(3), s.Int(4), s.Int(5)});
    }
    return out;
  });
}

}  // namespace agentstream::sqlite

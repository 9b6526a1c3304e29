#include "store/postgres/postgres_device_store.h"

#include <utility>

#include "store/device_rows.h"
#include "store/postgres/sql.h"

namespace agentstream::pg {

namespace {

constexpr const char* kDeviceColumns =
    "id, name, token_hash, created_ms, last_seen_ms, user_agent, revoked_ms, settings";

DeviceRecord DeviceOf(const Rows& r, int row) {
  return DeviceRecord{r.Text(row, 0), r.Text(row, 1), r.Bytes(row, 2), r.Int(row, 3),
                      r.Int(row, 4),  r.Text(row, 5), r.Int(row, 6),   r.Text(row, 7)};
}

// Runs an UPDATE whose $1 is the device id; kNotFound when no row changed.
Status UpdateDevice(Txn& t, const std::string& id, const std::string& sql,
                    std::vector<Param> params) {
  params.insert(params.begin(), Param(id));
  AS_ASSIGN_OR_RETURN(Rows r, t.Exec(sql, params));
  if (r.Affected() == 0) return Error(ErrorCode::kNotFound, "no device " + id);
  return Status::Ok();
}

}  // namespace

template <class Body>
Status PostgresDeviceStore::Write(Body body) {
  return queue_.RunControl<bool>([&](Txn& t, bool&) -> Status { return body(t); }).status();
}

Result<std::vector<DeviceRecord>> PostgresDeviceStore::Select(const std::string& where,
                                                              std::vector<Param> params) {
  using Devices = std::vector<DeviceRecord>;
  return WithReader<Devices>(readers_, [&](Conn& conn) -> Result<Devices> {
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec(std::string("SELECT ") + kDeviceColumns +
                                              " FROM devices " + where + " ORDER BY created_ms, id",
                                          params));
    Devices out;
    out.reserve(static_cast<std::size_t>(r.size()));
    for (int i = 0; i < r.size(); ++i) out.push_back(DeviceOf(r, i));
    return out;
  });
}

Status PostgresDeviceStore::AddPairing(const PairingRecord& pairing) {
  AS_RETURN_IF_ERROR(store_internal::CheckPairingRow(pairing));
  return Write([&](Txn& t) -> Status {
    AS_ASSIGN_OR_RETURN(Rows r,
                        t.Exec("INSERT INTO pairings(code_hash, name, created_ms, expires_ms) "
                               "VALUES($1,$2,$3,$4) ON CONFLICT (code_hash) DO NOTHING",
                               {Param::Bytes(pairing.code_hash), pairing.name, pairing.created_ms,
                                pairing.expires_ms}));
    if (r.Affected() == 0)
      return Error(ErrorCode::kAlreadyExists, "the pairing code is already stored");
    return Status::Ok();
  });
}

Result<DeviceRecord> PostgresDeviceStore::UsePairing(const std::string& code_hash,
                                                     DeviceRecord device, TimestampMs now_ms) {
  AS_RETURN_IF_ERROR(store_internal::CheckDeviceRow(device));
  return queue_.RunControl<DeviceRecord>([&](Txn& t, DeviceRecord& out) -> Status {
    AS_RETURN_IF_ERROR(t.Exec("DELETE FROM pairings WHERE expires_ms<=$1", {now_ms}).status());
    AS_ASSIGN_OR_RETURN(Rows taken, t.Exec("SELECT 1 FROM devices WHERE id=$1 OR token_hash=$2",
                                           {device.id, Param::Bytes(device.token_hash)}));
    if (taken.size() != 0)
      return Error(ErrorCode::kAlreadyExists, "the device id or token is already stored");
    // Of two transactions deleting one row, the second waits for the first and then finds none.
    AS_ASSIGN_OR_RETURN(Rows used, t.Exec("DELETE FROM pairings WHERE code_hash=$1 RETURNING name",
                                          {Param::Bytes(code_hash)}));
    if (used.size() == 0) return store_internal::PairingCodeRefused();
    device.name = used.Text(0, 0);
    AS_RETURN_IF_ERROR(
        t.Exec(std::string("INSERT INTO devices(") + kDeviceColumns +
                   ") VALUES($1,$2,$3,$4,$5,$6,$7,$8)",
               {device.id, device.name, Param::Bytes(device.token_hash), device.created_ms,
                device.last_seen_ms, device.user_agent, device.revoked_ms, device.settings})
            .status());
    out = device;
    return Status::Ok();
  });
}

Result<std::vector<DeviceRecord>> PostgresDeviceStore::ListDevices() { return Select("", {}); }

Result<DeviceRecord> PostgresDeviceStore::GetDevice(const std::string& id) {
  AS_RETURN_IF_ERROR(CheckText({{"a device id", id}}));
  AS_ASSIGN_OR_RETURN(auto found, Select("WHERE id=$1", {id}));
  if (found.empty()) return Error(ErrorCode::kNotFound, "no device " + id);
  return std::move(found.front());
}

Result<std::optional<DeviceRecord>> PostgresDeviceStore::FindDeviceByToken(
    const std::string& token_hash) {
  AS_ASSIGN_OR_RETURN(auto found, Select("WHERE token_hash=$1", {Param::Bytes(token_hash)}));
  if (found.empty()) return std::optional<DeviceRecord>();
  return std::optional<DeviceRecord>(std::move(found.front()));
}

Status PostgresDeviceStore::RenameDevice(const std::string& id, const std::string& name) {
  AS_RETURN_IF_ERROR(store_internal::CheckDeviceName(name));
  AS_RETURN_IF_ERROR(CheckText({{"a device id", id}}));
  return Write([&](Txn& t) {
    return UpdateDevice(t, id, "UPDATE devices SET name=$2 WHERE id=$1", {name});
  });
}

Status PostgresDeviceStore::RevokeDevice(const std::string& id, TimestampMs now_ms) {
  AS_RETURN_IF_ERROR(CheckText({{"a device id", id}}));
  return Write([&](Txn& t) {
    return UpdateDevice(t, id,
                        "UPDATE devices SET revoked_ms=CASE WHEN revoked_ms=0 THEN $2 ELSE "
                        "revoked_ms END, settings='' WHERE id=$1",
                        {now_ms});
  });
}

Status PostgresDeviceStore::TouchDevice(const std::string& id, TimestampMs seen_ms,
                                        const std::string& user_agent) {
  AS_RETURN_IF_ERROR(store_internal::CheckUserAgent(user_agent));
  AS_RETURN_IF_ERROR(CheckText({{"a device id", id}}));
  return Write([&](Txn& t) {
    return UpdateDevice(t, id,
                        "UPDATE devices SET last_seen_ms=greatest(last_seen_ms, $2), "
                        "user_agent=$3 WHERE id=$1",
                        {seen_ms, user_agent});
  });
}

Status PostgresDeviceStore::SetDeviceSettings(const std::string& id, const std::string& settings) {
  AS_RETURN_IF_ERROR(store_internal::CheckDeviceSettings(settings));
  AS_RETURN_IF_ERROR(CheckText({{"a device id", id}}));
  return Write([&](Txn& t) -> Status {
    AS_ASSIGN_OR_RETURN(Rows r, t.Exec("UPDATE devices SET settings=$2 WHERE id=$1 AND "
                                       "revoked_ms=0 RETURNING 1",
                                       {id, settings}));
    if (r.size() != 0) return Status::Ok();
    AS_ASSIGN_OR_RETURN(Rows exists, t.Exec("SELECT 1 FROM devices WHERE id=$1", {id}));
    if (exists.size() == 0) return Error(ErrorCode::kNotFound, "no device " + id);
    return Error(ErrorCode::kConflict, "device " + id + " is revoked");
  });
}

Result<std::vector<std::string>> PostgresDeviceStore::RevokedSince(TimestampMs since_ms) {
  using Ids = std::vector<std::string>;
  return WithReader<Ids>(readers_, [&](Conn& conn) -> Result<Ids> {
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT id FROM devices WHERE revoked_ms<>0 AND "
                                          "revoked_ms>=$1 ORDER BY id",
                                          {since_ms}));
    Ids out;
    for (int i = 0; i < r.size(); ++i) out.push_back(r.Text(i, 0));
    return out;
  });
}

Status PostgresDeviceStore::ReportPresence(const PresenceRecord& p) {
  AS_RETURN_IF_ERROR(store_internal::CheckPresenceRow(p));
  return Write([&](Txn& t) -> Status {
    AS_RETURN_IF_ERROR(t.Exec("DELETE FROM presence WHERE expires_ms<$1",
                              {p.expires_ms - store_internal::kPresenceRetentionMs})
                           .status());
    return t
        .Exec(
            "INSERT INTO presence(client, device_id, visible, focused_agent, last_activity_ms, "
            "expires_ms) VALUES($1,$2,$3,$4,$5,$6) ON CONFLICT (client) DO UPDATE SET "
            "device_id=excluded.device_id, visible=excluded.visible, "
            "focused_agent=excluded.focused_agent, last_activity_ms=excluded.last_activity_ms, "
            "expires_ms=excluded.expires_ms",
            {p.client, p.device_id, p.visible ? "true" : "false", p.focused_agent,
             p.last_activity_ms, p.expires_ms})
        .status();
  });
}

Status PostgresDeviceStore::DropPresence(const std::string& client) {
  AS_RETURN_IF_ERROR(CheckText({{"a presence client", client}}));
  return Write(
      [&](Txn& t) { return t.Exec("DELETE FROM presence WHERE client=$1", {client}).status(); });
}

Result<std::vector<PresenceRecord>> PostgresDeviceStore::ListPresence(TimestampMs now_ms) {
  using Presence = std::vector<PresenceRecord>;
  return WithReader<Presence>(readers_, [&](Conn& conn) -> Result<Presence> {
    AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT client, device_id, visible, focused_agent, "
                                          "last_activity_ms, expires_ms FROM presence WHERE "
                                          "expires_ms>$1 ORDER BY client",
                                          {now_ms}));
    Presence out;
    for (int i = 0; i < r.size(); ++i)
      out.push_back(PresenceRecord{r.Text(i, 0), r.Text(i, 1), r.Text(i, 2) == "t", r.Text(i, 3),
                                   r.Int(i, 4), r.Int(i, 5)});
    return out;
  });
}

}  // namespace agentstream::pg

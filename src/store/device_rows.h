// Internal to the store module: what every DeviceStore backend (device_store.h) checks before it
// stores a row, so the three refuse the same text the same way (kInvalidArgument): hashes of
// 32 bytes, names of 1 to 64 bytes, user agents of at most 256 bytes, settings of at most 16 KiB,
// and text that is UTF-8 without NUL bytes (what PostgreSQL's text holds).
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "store/device_store.h"

namespace agentstream::store_internal {

inline constexpr std::size_t kDeviceHashBytes = 32;
inline constexpr std::size_t kMaxDeviceNameBytes = 64;
inline constexpr std::size_t kMaxDeviceIdBytes = 128;
inline constexpr std::size_t kMaxUserAgentBytes = 256;
inline constexpr std::size_t kMaxDeviceSettingsBytes = std::size_t{16} * 1024;
// A presence row older than this (past its expiry) is deleted by the next report.
inline constexpr TimestampMs kPresenceRetentionMs = 24LL * 60 * 60 * 1000;

Status CheckPairingRow(const PairingRecord& pairing);
// `device` as UsePairing stores it (its name is the code's, checked with the code).
Status CheckDeviceRow(const DeviceRecord& device);
Status CheckDeviceName(const std::string& name);
Status CheckUserAgent(const std::string& user_agent);
Status CheckDeviceSettings(const std::string& settings);
Status CheckPresenceRow(const PresenceRecord& presence);
// The one answer of UsePairing for an unknown, used or expired code.
Status PairingCodeRefused();

}  // namespace agentstream::store_internal

// Test support (agentstream_store_testing; never linked into the daemon): a SQLite VFS that
// forwards to the default one and can be told to fail syncs, so tests exercise what a real fsync
// failure does to the log (it must turn sticky and lose nothing acknowledged). Registered under
// kFaultVfsName; selected with SqliteLogOptions::vfs, which routes every sync of the log through
// it: SQLite's own inside COMMIT and the WalSyncer's off the writer thread. Thread-safe.
#pragma once

namespace agentstream::sqlite {

inline constexpr const char* kFaultVfsName = "agentstream-fault";

// Registers the VFS once per process (idempotent).
void RegisterFaultVfs();

// While set, every xSync of a file opened through the fault VFS returns SQLITE_IOERR_FSYNC.
void SetFailSyncs(bool fail);

}  // namespace agentstream::sqlite

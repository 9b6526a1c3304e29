#include "store/sqlite/fault_vfs.h"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace agentstream::sqlite {

namespace {

std::atomic<bool> g_fail_syncs{false};
sqlite3_vfs* g_base = nullptr;
sqlite3_vfs g_vfs;

// A file of the fault VFS: our header followed by the base VFS's file object.
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* Inner() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

FaultFile* F(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f); }
const sqlite3_io_methods* Real(sqlite3_file* f) { return F(f)->Inner()->pMethods; }

int Close(sqlite3_file* f) {
  int rc = Real(f) ? Real(f)->xClose(F(f)->Inner()) : SQLITE_OK;
  return rc;
}
int ReadF(sqlite3_file* f, void* b, int n, sqlite3_int64 o) {
  return Real(f)->xRead(F(f)->Inner(), b, n, o);
}
int WriteF(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
  return Real(f)->xWrite(F(f)->Inner(), b, n, o);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return Real(f)->xTruncate(F(f)->Inner(), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (g_fail_syncs.load()) return SQLITE_IOERR_FSYNC;
  return Real(f)->xSync(F(f)->Inner(), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Real(f)->xFileSize(F(f)->Inner(), size);
}
int Lock(sqlite3_file* f, int l) { return Real(f)->xLock(F(f)->Inner(), l); }
int Unlock(sqlite3_file* f, int l) { return Real(f)->xUnlock(F(f)->Inner(), l); }
int CheckReserved(sqlite3_file* f, int* out) {
  return Real(f)->xCheckReservedLock(F(f)->Inner(), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->xFileControl(F(f)->Inner(), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->xSectorSize(F(f)->Inner()); }
int DeviceChars(sqlite3_file* f) { return Real(f)->xDeviceCharacteristics(F(f)->Inner()); }
int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return Real(f)->xShmMap(F(f)->Inner(), page, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->xShmLock(F(f)->Inner(), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->xShmBarrier(F(f)->Inner()); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->xShmUnmap(F(f)->Inner(), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 o, int n, void** out) {
  return Real(f)->xFetch(F(f)->Inner(), o, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 o, void* p) {
  return Real(f)->xUnfetch(F(f)->Inner(), o, p);
}

const sqlite3_io_methods kMethods = {
    3,       Close,      ReadF,         WriteF,      Truncate,   Sync,        FileSize,
    Lock,    Unlock,     CheckReserved, FileControl, SectorSize, DeviceChars, ShmMap,
    ShmLock, ShmBarrier, ShmUnmap,      Fetch,       Unfetch,
};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  FaultFile* ff = F(file);
  std::memset(ff->Inner(), 0, g_base->szOsFile);
  const int rc = g_base->xOpen(g_base, name, ff->Inner(), flags, out_flags);
  // SQLite calls xClose only when pMethods is set; leave it null when the open failed.
  ff->base.pMethods = (rc == SQLITE_OK && ff->Inner()->pMethods) ? &kMethods : nullptr;
  return rc;
}

int Delete(sqlite3_vfs*, const char* name, int sync) { return g_base->xDelete(g_base, name, sync); }
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_base->xAccess(g_base, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_base->xFullPathname(g_base, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_base->xDlOpen(g_base, name); }
void DlError(sqlite3_vfs*, int n, char* msg) { g_base->xDlError(g_base, n, msg); }
void (*DlSym(sqlite3_vfs*, void* h, const char* sym))(void) {
  return g_base->xDlSym(g_base, h, sym);
}
void DlClose(sqlite3_vfs*, void* h) { g_base->xDlClose(g_base, h); }
int Randomness(sqlite3_vfs*, int n, char* out) { return g_base->xRandomness(g_base, n, out); }
int Sleep(sqlite3_vfs*, int us) { return g_base->xSleep(g_base, us); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_base->xCurrentTime(g_base, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) { return g_base->xGetLastError(g_base, n, out); }
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_base->xCurrentTimeInt64(g_base, out);
}

}  // namespace

void RegisterFaultVfs() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_base = sqlite3_vfs_find(nullptr);
    std::memset(&g_vfs, 0, sizeof g_vfs);
    g_vfs.iVersion = 2;
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_base->szOsFile;
    g_vfs.mxPathname = g_base->mxPathname;
    g_vfs.zName = kFaultVfsName;
    g_vfs.xOpen = Open;
    g_vfs.xDelete = Delete;
    g_vfs.xAccess = Access;
    g_vfs.xFullPathname = FullPathname;
    g_vfs.xDlOpen = DlOpen;
    g_vfs.xDlError = DlError;
    g_vfs.xDlSym = DlSym;
    g_vfs.xDlClose = DlClose;
    g_vfs.xRandomness = Randomness;
    g_vfs.xSleep = Sleep;
    g_vfs.xCurrentTime = CurrentTime;
    g_vfs.xGetLastError = GetLastError;
    g_vfs.xCurrentTimeInt64 = CurrentTimeInt64;
    sqlite3_vfs_register(&g_vfs, 0);
  });
}

void SetFailSyncs(bool fail) { g_fail_syncs.store(fail); }

}  // namespace agentstream::sqlite

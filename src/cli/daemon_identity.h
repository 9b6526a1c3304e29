// The daemon's identity: an id that is stable across restarts on one data directory (kept in
// DATA/daemon.id, made on first start), and a lock on that directory (DATA/daemon.lock, flock),
// so two daemons never run on one directory with one id. A daemon restarted on its directory
// takes back its own ownership leases at once (store/coordination.h): the lock proves its earlier
// run is gone.
#pragma once

#include <string>

#include "core/status.h"

namespace agentstream::cli {

class DaemonIdentity {
 public:
  // Locks `data_dir` (creating it when missing) and reads or makes its id; `id` replaces the
  // stored one when not empty. kAlreadyExists when another process holds the lock, kIoError when
  // the directory or its files cannot be used. An empty `data_dir` (the memory store) gives a
  // fresh id and no lock.
  static Result<DaemonIdentity> Claim(const std::string& data_dir, const std::string& id);
  DaemonIdentity(DaemonIdentity&& other) noexcept;
  DaemonIdentity& operator=(DaemonIdentity&& other) = delete;
  DaemonIdentity(const DaemonIdentity&) = delete;
  ~DaemonIdentity();  // releases the lock

  const std::string& id() const { return id_; }
  const std::string& host() const { return host_; }

 private:
  DaemonIdentity(std::string id, std::string host, int lock_fd)
      : id_(std::move(id)), host_(std::move(host)), lock_fd_(lock_fd) {}
  std::string id_;
  std::string host_;
  int lock_fd_ = -1;
};

}  // namespace agentstream::cli

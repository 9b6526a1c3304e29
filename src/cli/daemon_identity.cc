#include "cli/daemon_identity.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "system/random_id.h"

namespace agentstream::cli {

namespace {

std::string Hostname() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) return "unknown";
  return host.data();
}

std::string NewId() { return system::RandomId("d"); }

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Status IoError(const std::string& what) {
  return Error(ErrorCode::kIoError, what + ": " + std::strerror(errno));
}

}  // namespace

Result<DaemonIdentity> DaemonIdentity::Claim(const std::string& data_dir, const std::string& id) {
  if (!id.empty() && !ValidId(id)) {
    return Error(ErrorCode::kInvalidArgument,
                 "a daemon id is 1 to 128 letters, digits, '_', '-' or '.', got '" + id + "'");
  }
  if (data_dir.empty()) return DaemonIdentity(id.empty() ? NewId() : id, Hostname(), -1);
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Error(ErrorCode::kIoError, "cannot create " + data_dir + ": " + ec.message());
  const std::string lock_path = data_dir + "/daemon.lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("cannot open " + lock_path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK)
      return Error(ErrorCode::kAlreadyExists, "another agentstream daemon uses " + data_dir);
    errno = error;
    return IoError("cannot lock " + lock_path);
  }
  DaemonIdentity claimed("", Hostname(), fd);
  const std::string id_path = data_dir + "/daemon.id";
  std::string stored;
  if (std::ifstream in(id_path); in) std::getline(in, stored);
  if (!stored.empty() && !ValidId(stored))
    return Error(ErrorCode::kCorruption, id_path + " does not hold a daemon id");
  claimed.id_ = !id.empty() ? id : !stored.empty() ? stored : NewId();
  if (claimed.id_ != stored) {
    const std::string temp = id_path + ".tmp";
    {
      std::ofstream out(temp, std::ios::trunc);
      out << claimed.id_ << "\n";
      if (!out.flush()) return IoError("cannot write " + temp);
    }
    if (std::rename(temp.c_str(), id_path.c_str()) != 0)
      return IoError("cannot rename " + temp + " to " + id_path);
  }
  return claimed;
}

DaemonIdentity::DaemonIdentity(DaemonIdentity&& other) noexcept
    : id_(std::move(other.id_)), host_(std::move(other.host_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

DaemonIdentity::~DaemonIdentity() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

}  // namespace agentstream::cli

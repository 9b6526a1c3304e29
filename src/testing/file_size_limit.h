// Test support (header-only, for tests only): a full disk, as this process sees it. While the
// object lives no file of the process can grow past `bytes` (RLIMIT_FSIZE): a write beyond fails
// with EFBIG, as one fails with ENOSPC on a full disk, instead of raising SIGXFSZ (ignored
// meanwhile). The old limit and signal disposition come back when it goes away, also when the
// test fails.
#pragma once

#include <sys/resource.h>

#include <csignal>
#include <stdexcept>

namespace agentstream::test_support {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    if (::getrlimit(RLIMIT_FSIZE, &saved_) != 0)
      throw std::runtime_error("cannot read the file size limit");
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = saved_;
    limited.rlim_cur = bytes;
    if (::setrlimit(RLIMIT_FSIZE, &limited) != 0) {
      std::signal(SIGXFSZ, old_handler_);
      throw std::runtime_error("cannot set the file size limit");
    }
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

}  // namespace agentstream::test_support

// Test support (header-only, for tests only): a directory of a test's own for its files. Made
// with mkdtemp(3) under $TMPDIR (else /tmp), so no two tests, and no two runs of one test, ever
// share a path, and removed with everything in it when the object goes away, also when the test
// fails (a failed ASSERT returns through the destructor).
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace agentstream::test_support {

class TempDir {
 public:
  // Creates "<tmp>/agentstream-<prefix>-XXXXXX". Throws std::runtime_error when it cannot (the
  // test then fails with that message).
  explicit TempDir(std::string_view prefix = "test") {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        (tmp != nullptr && *tmp != '\0' ? std::string(tmp) : std::string("/tmp")) +
        "/agentstream-" + std::string(prefix) + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary directory " + pattern);
    path_ = pattern;
  }
  // Removes the directory and everything in it; errors are ignored.
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name (nothing is created).
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// Writes `text` to the file at `path`, replacing it, with the folders above it created.
inline void WriteTextFile(const std::string& path, std::string_view text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

}  // namespace agentstream::test_support

// What this binary is: its version, the commit it was built from and how, for `--version` and
// the daemon's start line. The definitions are written at build time (cmake/build_info.cmake).
#pragma once

#include <string>

namespace agentstream::cli {

struct BuildInfo {
  const char* version;     // the project's version, e.g. "0.1.0"
  const char* commit;      // the git commit, "-dirty" with uncommitted changes, else "unknown"
  const char* build_type;  // CMAKE_BUILD_TYPE: Debug, Release, ...
  const char* stores;      // the store backends compiled in, e.g. "memory sqlite postgresql"
};

const BuildInfo& GetBuildInfo();

// The text `agentstream --version` prints.
std::string VersionText();

}  // namespace agentstream::cli

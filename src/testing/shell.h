// Test support (header-only, for tests only): a shell command run to completion with its stdout
// captured (popen(3)), for tests that set up real git repositories and compare with what the git
// command line says.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <string>

namespace agentstream::test_support {

struct ShellResult {
  int status = -1;  // as pclose(3) returns it: 0 when the command exited 0
  std::string out;
};

// Runs `command` with /bin/sh and waits for it.
inline ShellResult RunShell(const std::string& command) {
  ShellResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  result.status = ::pclose(pipe);
  return result;
}

// Runs `command` and returns its stdout; the calling test fails if the command exits non-zero.
inline std::string ShellOutput(const std::string& command) {
  ShellResult ran = RunShell(command);
  EXPECT_EQ(ran.status, 0) << command;
  return ran.out;
}

}  // namespace agentstream::test_support

// AcpTerminals: the client side of ACP's terminal/* methods (create, output, wait_for_exit, kill,
// release). Each terminal is one command run by the process layer in the session's cwd (or a
// directory inside it), with stdout and stderr merged and its output kept up to a byte limit
// (the oldest bytes are dropped first, as ACP specifies).
//
// Bounds: at most `max_terminals` live terminals; output at most `max_output_bytes` each (or the
// agent's smaller outputByteLimit). Destroying AcpTerminals kills every terminal.
// Threading: the provider's EventLoop thread.
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "process/child_process.h"

namespace agentstream::providers::acp {

struct TerminalLimits {
  std::size_t max_terminals = 16;
  std::size_t max_output_bytes = std::size_t{1} << 20;
  process::KillPlan kill_plan{process::Millis(500), process::Millis(1000)};
};

class AcpTerminals {
 public:
  using Respond = std::function<void(Result<boost::json::value>)>;

  AcpTerminals(process::EventLoop& loop, std::string cwd, TerminalLimits limits);
  ~AcpTerminals();

  // Handles one terminal/* request; `respond` runs once, possibly later (wait_for_exit).
  // kNotFound for an unknown method or terminal id, kInvalidArgument for bad params or a cwd
  // outside the session's, kResourceExhausted at the terminal bound.
  void Handle(const std::string& method, const boost::json::value& params, Respond respond);

  std::size_t size() const { return terminals_.size(); }

 private:
  struct Terminal {
    std::unique_ptr<process::ChildProcess> child;
    std::string output;
    std::size_t limit = 0;
    bool truncated = false;
    bool exited = false;
    process::ExitInfo exit;
    std::vector<Respond> waiters;
  };
  Result<boost::json::value> Create(const boost::json::value& params);
  static boost::json::value ExitStatus(const Terminal& t);

  process::EventLoop& loop_;
  std::string cwd_;
  TerminalLimits limits_;
  std::map<std::string, std::unique_ptr<Terminal>> terminals_;
  std::uint64_t next_ = 1;
};

}  // namespace agentstream::providers::acp

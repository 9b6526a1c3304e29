// Test support: what the tests read of a provider beyond the AgentProvider interface, for their
// failure messages. Header-only; call it on the provider's EventLoop thread.
#pragma once

#include <string>

#include "providers/child_process_provider.h"
#include "providers/opencode/opencode_provider.h"

namespace agentstream::providers::testing {

class ProviderTestPeer {
 public:
  // The runtime process's stderr tail ("" before Start()).
  static std::string StderrTail(const ChildProcessProvider& provider) {
    return provider.StderrTail();
  }
  static std::string StderrTail(const opencode::OpencodeProvider& provider) {
    return provider.StderrTail();
  }
};

}  // namespace agentstream::providers::testing

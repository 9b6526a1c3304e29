// `agentstream demo`: plays a scripted agent session into a session log and follows it live, so a
// person can watch events commit. Uses only the store; the daemon builds on the same log.
#pragma once

#include <string>

namespace agentstream::cli {

struct DemoOptions {
  std::string store_url;       // where the log lives
  int turns = 3;               // scripted turns to play
  int delay_ms = 40;           // pause between streamed deltas
  bool json = false;           // print raw JSON envelopes instead of text
  bool stop_mid_turn = false;  // leave the last turn without its terminal, as a crash would
};

// Returns the process exit code.
int RunDemo(const DemoOptions& options);

}  // namespace agentstream::cli

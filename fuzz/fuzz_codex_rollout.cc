// libFuzzer target: a codex CLI session file read as history (providers/codex/codex_rollout.h:
// ParseRollout), the reader `agentstream import codex` will use on files from the disk. Checked:
// nothing throws; every text of every event, the session id and the cwd are valid UTF-8; every
// line is counted and no more are malformed than read; a tool end names a call; reading the same
// bytes twice gives the same events (ids invented for what the file leaves unnamed are stable).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "fuzz_check.h"
#include "provider_event_check.h"
#include "providers/codex/codex_rollout.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace codex = agentstream::providers::codex;
  namespace turn = agentstream::turn;
  using agentstream::fuzzing::Check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const codex::Rollout r = codex::ParseRollout(text);
  Check(r.malformed <= r.lines);
  std::size_t newlines = 0;
  for (char c : text) newlines += c == '\n';
  Check(r.lines <= newlines + 1);
  agentstream::fuzzing::CheckText(r.session_id);
  agentstream::fuzzing::CheckText(r.cwd);
  for (const turn::ProviderEvent& e : r.events) {
    agentstream::fuzzing::CheckEvent(e);
    if (const auto* end = std::get_if<turn::ProviderToolEnd>(&e))
      Check(!end->call_id.str().empty());
  }
  const codex::Rollout again = codex::ParseRollout(text);
  Check(again.events.size() == r.events.size() && again.lines == r.lines);
  for (std::size_t i = 0; i < r.events.size(); ++i) {
    if (const auto* start = std::get_if<turn::ProviderToolStart>(&r.events[i]))
      Check(std::get<turn::ProviderToolStart>(again.events[i]).call_id == start->call_id);
  }
  return 0;
}

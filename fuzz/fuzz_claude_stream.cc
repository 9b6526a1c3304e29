// libFuzzer target: the `claude` CLI's stream-json stdout parser (providers/claude/
// claude_parser.h: ClaudeStreamParser::Parse, one line to provider events) and, on the same bytes
// as a transcript file, ParseTranscript (claude_protocol.h). The input is split at '\n' into the
// lines of one process. Checked: nothing throws; every text and JSON value that leaves the parser
// is valid UTF-8, as the header promises (invalid bytes are repaired); ParseJsonRepaired's value
// serializes to JSON a strict parser reads back equal; a garbage line's quote is bounded; a
// `result` line ends with ProviderTurnResult, a control_request carries its event.
#include <boost/json.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "core/utf8.h"
#include "fuzz_check.h"
#include "json_same.h"
#include "provider_event_check.h"
#include "providers/claude/claude_parser.h"
#include "providers/claude/claude_protocol.h"

namespace agentstream::providers::claude {
namespace {

namespace json = boost::json;

using fuzzing::Check;
using fuzzing::CheckEvent;
using fuzzing::CheckText;

void CheckLine(std::string_view line, const ParsedLine& parsed) {
  for (const turn::ProviderEvent& e : parsed.events) CheckEvent(e);
  if (parsed.init) {
    CheckText(parsed.init->session_id);
    CheckText(parsed.init->model);
    CheckText(parsed.init->permission_mode);
    for (const std::string& c : parsed.init->slash_commands) CheckText(c);
  }
  if (parsed.control_request) {
    CheckText(parsed.control_request->request_id);
    CheckText(json::value(parsed.control_request->request));
    Check(!parsed.events.empty());
  }
  if (parsed.control_response) {
    CheckText(parsed.control_response->request_id);
    CheckText(parsed.control_response->error);
    CheckText(parsed.control_response->response);
  }
  CheckText(parsed.cancel_request_id);
  CheckText(parsed.replayed_uuid);
  if (parsed.turn_result) {
    Check(!parsed.events.empty());
    Check(std::holds_alternative<turn::ProviderTurnResult>(parsed.events.back()));
  }
  for (const turn::ProviderEvent& e : parsed.events) {
    if (const auto* error = std::get_if<turn::ProviderError>(&e)) {
      Check(!error->fatal && error->code == "protocol_garbage");
      Check(error->message.size() <= 200 + std::string_view("unparseable stdout line: ").size());
    }
  }
  // A blank line (one trailing CR aside) yields nothing.
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) Check(parsed.events.empty());
}

void CheckRepairedJson(std::string_view line) {
  const std::optional<json::value> v = ParseJsonRepaired(line);
  if (!v) return;
  CheckText(*v);
  boost::system::error_code ec;
  const json::value again = json::parse(json::serialize(*v), ec);  // strict UTF-8
  Check(!ec && fuzz::SameJson(again, *v));
}

}  // namespace
}  // namespace agentstream::providers::claude

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace claude = agentstream::providers::claude;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  claude::ClaudeStreamParser parser;
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    claude::CheckLine(line, parser.Parse(line));
    claude::CheckRepairedJson(line);
  }
  const claude::ParsedLine oversize = parser.Oversize(size, 1);
  claude::Check(oversize.events.size() == 1 && !oversize.turn_result);
  for (const agentstream::turn::ProviderEvent& e : claude::ParseTranscript(text))
    claude::CheckEvent(e);
  return 0;
}

// libFuzzer target: the server-sent events parser (net/sse_parser.h) on any bytes a server may
// send. The first byte picks the limits (bit 7: the defaults, else a small line and event limit
// and, bit 6, skip_oversize), the second how the rest is split into reads. Checked: the result
// does not depend on the split; under the default limits the events equal those of a plain
// reading of the standard's algorithm (below); no event exceeds max_event_bytes; no field
// holds a line end; a failed parser stays failed and appends nothing. The writer
// (net/sse_writer.h) is checked too: any bytes as a payload read back as written.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "net/sse_parser.h"
#include "net/sse_writer.h"

namespace agentstream::net {
namespace {

using fuzzing::Check;

// HTML Living Standard 9.2.6, read literally, with no limits: a leading BOM is ignored, lines end
// at CRLF, LF or CR, an empty line dispatches, a trailing line without its end is not processed.
std::vector<SseEvent> Reference(std::string_view s) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (s.substr(0, kBom.size()) == kBom) s.remove_prefix(kBom.size());
  std::vector<SseEvent> out;
  std::string type, data, id;
  bool has_data = false;
  auto line_ended = [&](std::string_view line) {
    if (line.empty()) {
      if (has_data) out.push_back(SseEvent{type.empty() ? "message" : type, data, id});
      type.clear();
      data.clear();
      has_data = false;
      return;
    }
    if (line.front() == ':') return;
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "data") {
      if (has_data) data += '\n';
      data += value;
      has_data = true;
    } else if (field == "event") {
      type = value;
    } else if (field == "id" && value.find('\0') == std::string_view::npos) {
      id = value;
    }
  };
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\r' && s[i] != '\n') continue;
    line_ended(s.substr(start, i - start));
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    start = i + 1;
  }
  return out;
}

struct Outcome {
  Status status;
  std::vector<SseEvent> events;
  std::size_t dropped = 0;
};

// Feeds `bytes` in reads of `step`, `step + 1`, ... bytes (the whole at once when step is 0).
Outcome Run(const SseLimits& limits, std::string_view bytes, std::size_t step) {
  SseParser parser(limits);
  Outcome out;
  std::string_view rest = bytes;
  for (std::size_t n = step == 0 ? bytes.size() : step; out.status.ok() && !rest.empty(); ++n) {
    const std::string_view read = rest.substr(0, n);
    rest.remove_prefix(read.size());
    out.status = parser.Feed(read, out.events);
  }
  if (!out.status.ok()) {  // sticky: the same error again, and nothing appended
    const std::size_t before = out.events.size();
    const Status again = parser.Feed("data: x\n\n", out.events);
    Check(!again.ok() && again.code() == out.status.code());
    Check(out.events.size() == before);
    Check(out.status.code() == ErrorCode::kTooLarge && !limits.skip_oversize);
  }
  out.dropped = parser.dropped();
  return out;
}

// The writer (net/sse_writer.h) with `payload`: one event of that name, its data the payload with
// CRLF and CR as LF, whatever the payload holds; and the three-part form of a one-line payload
// is the same bytes.
void CheckWriter(std::string_view payload) {
  const std::string event = FormatSseEvent("data", payload);
  std::string want(payload);
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] != '\r') continue;
    if (i + 1 < want.size() && want[i + 1] == '\n') {
      want.erase(i, 1);
    } else {
      want[i] = '\n';
    }
  }
  const auto read = Reference(event);
  Check(read.size() == 1 && read[0].event == "data" && read[0].data == want);
  if (payload.find_first_of("\r\n") == std::string_view::npos &&
      (payload.empty() || payload.front() != ' '))
    Check(SseEventHead("data") + std::string(payload) + std::string(kSseEventEnd) == event);
}

}  // namespace
}  // namespace agentstream::net

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using agentstream::net::Check;
  using agentstream::net::SseEvent;
  using agentstream::net::SseLimits;
  if (size < 2) return 0;
  SseLimits limits;
  const bool defaults = (data[0] & 0x80) != 0;
  if (!defaults) {
    limits.max_line_bytes = data[0] % 32 + 1;
    limits.max_event_bytes = (data[0] >> 2) % 48 + 1;
    limits.skip_oversize = (data[0] & 0x40) != 0;
  }
  const std::size_t step = data[1] % 16 + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);

  const auto whole = agentstream::net::Run(limits, bytes, 0);
  const auto pieces = agentstream::net::Run(limits, bytes, step);
  Check(whole.status.ok() == pieces.status.ok());
  Check(whole.events == pieces.events && whole.dropped == pieces.dropped);
  for (const SseEvent& e : whole.events) {
    const std::size_t type_bytes = e.event == "message" ? 0 : e.event.size();
    Check(e.data.size() + type_bytes <= limits.max_event_bytes);
    Check(e.data.find('\r') == std::string::npos);
    Check(e.event.find_first_of("\r\n") == std::string::npos);
    Check(e.id.find_first_of(std::string_view("\r\n\0", 3)) == std::string::npos);
  }
  if (defaults) {
    Check(whole.status.ok() && whole.dropped == 0);
    Check(whole.events == agentstream::net::Reference(bytes));
  }
  agentstream::net::CheckWriter(bytes);
  return 0;
}

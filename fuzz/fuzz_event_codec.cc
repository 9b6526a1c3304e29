// libFuzzer target: event envelopes and payloads from clients or disk never crash the codec,
// and whatever decodes re-encodes to something that decodes again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/event_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto record = agentstream::DecodeEnvelope(text);
  if (record.ok()) {
    auto again = agentstream::DecodeEnvelope(agentstream::EncodeEnvelope(*record));
    if (!again.ok()) std::abort();
    (void)agentstream::DecodeRecord(*record);
  }
  if (size >= 2) {
    const std::uint16_t kind = static_cast<std::uint16_t>(data[0] % 90);
    (void)agentstream::DecodePayload(kind, 1, text.substr(1));
  }
  return 0;
}

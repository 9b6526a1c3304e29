// libFuzzer target: stored record batches (bytes read from disk) never crash the reader.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "store/record_batch.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint64_t count = data[0] % 8 + 1;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<agentstream::store_internal::StoredRow> rows;
  agentstream::Status status = agentstream::store_internal::DecodeBatch(
      bytes, 1, agentstream::Seq(1), agentstream::Seq(count), agentstream::Seq(1),
      agentstream::Seq(count), rows);
  for (const auto& row : rows) (void)agentstream::store_internal::VerifyRow(row);
  (void)status;
  return 0;
}

// libFuzzer target: the source ranges of the timeline's durable index rows as the store returns
// them (timeline/durable_index.h, DecodeRanges). Checked: text that decodes is ascending,
// disjoint and non-adjacent ranges of positive seqs that encode and decode back to themselves;
// any other text is kCorruption. The same bytes read as seqs and folded with AddToRanges encode to
// text that decodes to the same ranges.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/timeline/item.h"
#include "fuzz_check.h"
#include "timeline/durable_index.h"

namespace agentstream {
namespace {

using fuzzing::Check;
using timeline::SeqRange;

bool WellFormed(const std::vector<SeqRange>& ranges) {
  if (ranges.empty()) return false;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].first.value() == 0 || ranges[i].last < ranges[i].first) return false;
    if (i > 0 && ranges[i].first.value() <= ranges[i - 1].last.value() + 1) return false;
  }
  return true;
}

void Run(std::string_view text) {
  Result<std::vector<SeqRange>> decoded = DecodeRanges(text);
  if (decoded.ok()) {
    Check(WellFormed(*decoded));
    Result<std::vector<SeqRange>> again = DecodeRanges(EncodeRanges(*decoded));
    Check(again.ok() && *again == *decoded);
  } else {
    Check(decoded.status().code() == ErrorCode::kCorruption);
  }
  // The bytes as ascending seq steps (each byte a gap of 0..255 seqs), folded as the indexer does.
  std::vector<SeqRange> folded;
  std::uint64_t seq = 0;
  for (unsigned char c : text) {
    seq += c % 4 == 0 ? std::uint64_t{c} + 1 : 1;  // mostly runs of adjacent seqs, some gaps
    timeline::AddToRanges(folded, Seq(seq));
  }
  if (folded.empty()) return;
  Check(WellFormed(folded));
  Result<std::vector<SeqRange>> back = DecodeRanges(EncodeRanges(folded));
  Check(back.ok() && *back == folded);
}

}  // namespace
}  // namespace agentstream

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  agentstream::Run(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

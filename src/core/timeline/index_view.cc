#include "core/timeline/index_view.h"

#include <algorithm>

namespace agentstream::timeline {

Result<std::vector<ItemSpan>> ProjectionIndexView::Spans(std::size_t lo, std::size_t hi) {
  std::vector<ItemSpan> out;
  for (std::size_t i = lo; i < std::min(hi, index_.size()); ++i) out.push_back(index_.span(i));
  return out;
}

Result<std::vector<IndexView::Numbered>> ProjectionIndexView::EndingAfter(std::size_t limit,
                                                                          Seq seq) {
  std::vector<Numbered> out;
  for (std::size_t ordinal : index_.EndingAfter(limit, seq))
    out.emplace_back(ordinal, index_.span(ordinal));
  return out;
}

}  // namespace agentstream::timeline

#include "core/timeline/projection_index.h"

#include <algorithm>

namespace agentstream::timeline {

namespace {

// What a string holds outside itself: nothing while it fits the small-string buffer.
std::size_t HeapBytes(const std::string& s) {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

}  // namespace

std::optional<std::size_t> ProjectionIndex::Add(const Event& event, bool* created) {
  if (created) *created = false;
  if (event.seq <= tail_) return std::nullopt;
  tail_ = event.seq;
  std::optional<ItemKey> key = ItemKeyOf(event);
  if (!key) return std::nullopt;
  const bool merges = key->key.front() != '#';
  if (merges) {
    if (auto it = by_key_.find(key->key); it != by_key_.end()) {
      ItemSpan& span = spans_[it->second];
      const std::size_t ranges = span.ranges.capacity();
      AddToRanges(span.ranges, event.seq);
      heap_bytes_ += (span.ranges.capacity() - ranges) * sizeof(SeqRange);
      span.seq_end = event.seq;
      TreeSet(it->second, event.seq.value());
      return it->second;
    }
  }
  const std::size_t ordinal = spans_.size();
  spans_.push_back(ItemSpan{key->kind, key->key, event.seq, event.seq, {{event.seq, event.seq}}});
  heap_bytes_ += HeapBytes(spans_.back().key) + spans_.back().ranges.capacity() * sizeof(SeqRange);
  if (merges) {
    // A hash node: the key, the ordinal, the next pointer and the cached hash; plus its bucket.
    heap_bytes_ +=
        sizeof(std::string) + HeapBytes(key->key) + 3 * sizeof(std::size_t) + sizeof(void*);
    by_key_.emplace(std::move(key->key), ordinal);
  }
  TreeAppend(event.seq.value());
  if (created) *created = true;
  return ordinal;
}

std::size_t ProjectionIndex::MemoryBytes() const {
  return sizeof(*this) + heap_bytes_ + spans_.capacity() * sizeof(ItemSpan) +
         tree_.capacity() * sizeof(std::uint64_t);
}

std::size_t ProjectionIndex::FirstStartingAfter(Seq seq) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), seq,
                             [](Seq s, const ItemSpan& span) { return s < span.seq_start; });
  return static_cast<std::size_t>(it - spans_.begin());
}

std::vector<std::size_t> ProjectionIndex::EndingAfter(std::size_t ordinal_limit, Seq seq) const {
  std::vector<std::size_t> out;
  ordinal_limit = std::min(ordinal_limit, spans_.size());
  if (ordinal_limit == 0) return out;
  TreeCollect(1, 0, tree_capacity_, ordinal_limit, seq.value(), out);
  return out;
}

void ProjectionIndex::TreeAppend(std::uint64_t value) {
  const std::size_t ordinal = spans_.size() - 1;
  if (ordinal >= tree_capacity_) {
    // Grow to the next power of two and rebuild: amortized O(1) per item.
    tree_capacity_ = std::max<std::size_t>(16, tree_capacity_ * 2);
    tree_.assign(2 * tree_capacity_, 0);
    for (std::size_t i = 0; i < ordinal; ++i) tree_[tree_capacity_ + i] = spans_[i].seq_end.value();
    for (std::size_t n = tree_capacity_ - 1; n >= 1; --n)
      tree_[n] = std::max(tree_[2 * n], tree_[2 * n + 1]);
  }
  TreeSet(ordinal, value);
}

void ProjectionIndex::TreeSet(std::size_t ordinal, std::uint64_t value) {
  std::size_t n = tree_capacity_ + ordinal;
  tree_[n] = value;
  for (n /= 2; n >= 1; n /= 2) tree_[n] = std::max(tree_[2 * n], tree_[2 * n + 1]);
}

void ProjectionIndex::TreeCollect(std::size_t node, std::size_t lo, std::size_t hi,
                                  std::size_t limit, std::uint64_t above,
                                  std::vector<std::size_t>& out) const {
  if (lo >= limit || tree_[node] <= above) return;
  if (hi - lo == 1) {
    out.push_back(lo);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  TreeCollect(2 * node, lo, mid, limit, above, out);
  TreeCollect(2 * node + 1, mid, hi, limit, above, out);
}

}  // namespace agentstream::timeline

#include "core/timeline/projection.h"

#include "core/timeline/assembler.h"

namespace agentstream::timeline {

std::optional<std::size_t> Projection::Apply(const Event& event) {
  bool created = false;
  std::optional<std::size_t> ordinal = index_.Add(event, &created);
  if (!ordinal) return std::nullopt;
  if (created) items_.push_back(NewItem(*ItemKeyOf(event), event));
  FoldIntoItem(items_[*ordinal], event);
  return ordinal;
}

Projection Project(std::span<const Event> events) {
  Projection projection(events.empty() ? Epoch(1) : events.front().epoch);
  for (const Event& e : events) projection.Apply(e);
  return projection;
}

}  // namespace agentstream::timeline

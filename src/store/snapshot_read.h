// Internal to the store module: a history read over one snapshot of a SQL backend (SQLite,
// PostgreSQL). The snapshot answers the backend's own queries; the walk through a fork or rewind
// chain, the bounds and the row checks are log_state.h's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/log_state.h"

namespace agentstream::store_internal {

// `Snapshot` provides Session(id) (a row with `key` and `current`), Key(id), Base(key, epoch)
// (kNotFound for an unknown epoch), TailOf(key, epoch, base_seq) and RowsOf(key, epoch, lo, hi,
// backward, limit, out). `visible(session, epoch, committed)` is the tail readers may see.
template <class Snapshot, class Visible>
Result<ReadResult> ReadThrough(Snapshot& snap, const ReadRequest& request, const LogLimits& limits,
                               const Visible& visible) {
  AS_ASSIGN_OR_RETURN(auto session, snap.Session(request.session));
  const Epoch epoch = request.epoch.value_or(session.current);
  auto base = snap.Base(session.key, epoch);
  if (!base.ok())
    return Error(base.status().code(), request.session.str() + ": " + base.status().message());
  AS_ASSIGN_OR_RETURN(Seq committed,
                      snap.TailOf(session.key, epoch, *base ? (*base)->seq : Seq(0)));
  const Seq tail = visible(request.session, epoch, committed);
  std::map<std::string, std::int64_t> keys{{request.session.str(), session.key}};
  auto key_of = [&](const SessionId& id) -> Result<std::int64_t> {
    if (auto it = keys.find(id.str()); it != keys.end()) return it->second;
    AS_ASSIGN_OR_RETURN(std::int64_t key, snap.Key(id));
    keys[id.str()] = key;
    return key;
  };
  auto lookup = [&](const SessionId& s, Epoch e) -> Result<std::optional<HistoryBase>> {
    AS_ASSIGN_OR_RETURN(std::int64_t key, key_of(s));
    auto found = snap.Base(key, e);
    if (!found.ok() && found.status().code() == ErrorCode::kNotFound)
      return Error(ErrorCode::kCorruption, "history refers to a missing epoch of " + s.str());
    return found;
  };
  AS_ASSIGN_OR_RETURN(auto segments, ResolveSegments(request.session, epoch, tail, lookup));
  auto reader = [&](const Segment& seg, Seq lo, Seq hi, bool backward, std::size_t limit,
                    std::vector<StoredRow>& out) -> Status {
    AS_ASSIGN_OR_RETURN(std::int64_t key, key_of(seg.session));
    return snap.RowsOf(key, seg.epoch, lo, hi, backward, limit, out);
  };
  return ReadSegments(request, request.session, epoch, tail, segments, limits, reader);
}

}  // namespace agentstream::store_internal

#include "store/log_state.h"

#define XXH_STATIC_LINKING_ONLY  // for XXH3_state_t on the stack
#include <xxhash.h>

#include <algorithm>
#include <string>

namespace agentstream::store_internal {

namespace {
std::string Num(std::uint64_t n) { return std::to_string(n); }
}  // namespace

Status CheckBatch(const std::vector<NewEvent>& events, const LogLimits& limits, bool allow_empty) {
  if (events.empty() && !allow_empty) {
    return Error(ErrorCode::kInvalidArgument, "an append needs at least one event");
  }
  if (events.size() > limits.max_batch_events) {
    return Error(ErrorCode::kTooLarge, "an append holds " + Num(events.size()) +
                                           " events; the limit is " + Num(limits.max_batch_events));
  }
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    bytes += events[i].payload.size();
    Status status = ValidateNewEvent(events[i], limits.max_payload_bytes);
    if (!status.ok()) {
      return Error(status.code(), "event " + Num(i) + " of the append: " + status.message());
    }
  }
  if (bytes > limits.max_batch_bytes) {
    return Error(ErrorCode::kTooLarge, "an append holds " + Num(bytes) +
                                           " payload bytes; the limit is " +
                                           Num(limits.max_batch_bytes));
  }
  return Status::Ok();
}

Status CheckOwner(const SessionState& session, const SessionId& id,
                  std::optional<std::uint64_t> generation) {
  if (generation && *generation != session.owner.generation) {
    return Error(ErrorCode::kFenced,
                 "ownership generation " + Num(*generation) + " of " + id.str() +
                     " is stale (current " + Num(session.owner.generation) + ", held by " +
                     (session.owner.owner.empty() ? std::string("nobody") : session.owner.owner) +
                     ")");
  }
  return Status::Ok();
}

Status CheckCheckpoint(const SessionState& session, const SessionId& id,
                       const Checkpoint& checkpoint, const LogLimits& limits) {
  if (checkpoint.body.size() > limits.max_checkpoint_bytes) {
    return Error(ErrorCode::kTooLarge, "a checkpoint of " + Num(checkpoint.body.size()) +
                                           " bytes exceeds the limit of " +
                                           Num(limits.max_checkpoint_bytes));
  }
  if (checkpoint.epoch != session.current()) {
    return Error(ErrorCode::kConflict, "a checkpoint of epoch " + Num(checkpoint.epoch.value()) +
                                           " of " + id.str() + ", whose current epoch is " +
                                           Num(session.current().value()));
  }
  if (checkpoint.seq > session.epochs.back().tail) {
    return Error(ErrorCode::kInvalidArgument, "a checkpoint at seq " + Num(checkpoint.seq.value()) +
                                                  " of " + id.str() + ", past the tail " +
                                                  Num(session.epochs.back().tail.value()));
  }
  return Status::Ok();
}

Result<OwnerGrant> GrantOwnership(SessionState& session, const SessionId& id,
                                  const std::string& owner, TimestampMs now_ms,
                                  std::int64_t ttl_ms) {
  if (owner.empty()) return Error(ErrorCode::kInvalidArgument, "an owner must be named");
  if (ttl_ms <= 0) return Error(ErrorCode::kInvalidArgument, "a lease needs a positive ttl");
  OwnerLease previous = session.owner;
  previous.now_ms = now_ms;
  if (previous.live() && previous.owner != owner) {
    return Error(ErrorCode::kConflict, id.str() + " is owned by " + previous.owner + " for " +
                                           Num(previous.expires_ms - now_ms) + " ms more");
  }
  session.owner = OwnerLease{owner, previous.generation + 1, now_ms + ttl_ms, 0};
  OwnerLease granted = session.owner;
  granted.now_ms = now_ms;
  return OwnerGrant{std::move(granted), std::move(previous)};
}

bool RenewOwnership(SessionState& session, const std::string& owner, std::uint64_t generation,
                    TimestampMs now_ms, std::int64_t ttl_ms) {
  if (session.owner.owner != owner || session.owner.generation != generation) return false;
  session.owner.expires_ms = now_ms + ttl_ms;
  return true;
}

Status ReleaseOwnership(SessionState& session, const SessionId& id, std::uint64_t generation) {
  if (session.owner.generation != generation || session.owner.owner.empty()) {
    return Error(ErrorCode::kFenced,
                 "ownership generation " + Num(generation) + " of " + id.str() + " is not held");
  }
  session.owner.owner.clear();
  session.owner.expires_ms = 0;
  return Status::Ok();
}

Status CheckDaemonIdentity(const DaemonRecord& stored, const DaemonRecord& self, TimestampMs now_ms,
                           std::int64_t ttl_ms) {
  if (self.id.empty()) return Error(ErrorCode::kInvalidArgument, "a daemon needs an id");
  if (stored.id.empty() || (stored.host == self.host && stored.data_dir == self.data_dir))
    return Status::Ok();
  if (now_ms - stored.heartbeat_ms < ttl_ms) {
    return Error(ErrorCode::kAlreadyExists,
                 "daemon id " + self.id + " is in use by a live daemon on " + stored.host + " (" +
                     stored.data_dir + ", heartbeat " + Num(now_ms - stored.heartbeat_ms) +
                     " ms ago); give each daemon its own id");
  }
  return Status::Ok();
}

Result<AppendPlan> PlanAppend(const SessionState& session, const AppendRequest& request) {
  AS_RETURN_IF_ERROR(CheckOwner(session, request.session, request.owner_generation));
  const Epoch current = session.current();
  if (request.epoch && *request.epoch != current) {
    return Error(ErrorCode::kFenced, "epoch " + Num(request.epoch->value()) +
                                         " is not the current epoch of " + request.session.str() +
                                         " (current: " + Num(current.value()) + ")");
  }
  const EpochState& epoch = session.epochs.back();
  AppendPlan plan;
  if (request.producer) {
    const ProducerStamp& stamp = *request.producer;
    if (stamp.id.empty())
      return Error(ErrorCode::kInvalidArgument, "producer id must not be empty");
    auto it = session.producers.find(stamp.id.str());
    if (it != session.producers.end()) {
      const ProducerState& known = it->second;
      if (stamp.epoch < known.epoch) {
        return Error(ErrorCode::kFenced, "producer " + stamp.id.str() + " epoch " +
                                             Num(stamp.epoch) + " is stale (current " +
                                             Num(known.epoch) + ")");
      }
      if (stamp.epoch == known.epoch) {
        if (stamp.seq <= known.seq) {
          plan.result = AppendResult{current, known.first_seq, known.last_seq, true};
          return plan;
        }
        if (stamp.seq != known.seq + 1) {
          return Error(ErrorCode::kSequenceGap, "producer " + stamp.id.str() + " sent seq " +
                                                    Num(stamp.seq) + "; expected " +
                                                    Num(known.seq + 1));
        }
      } else if (stamp.seq != 0) {
        return Error(ErrorCode::kInvalidArgument, "producer " + stamp.id.str() + " epoch " +
                                                      Num(stamp.epoch) + " must start at seq 0");
      }
    } else if (stamp.seq != 0) {
      return Error(ErrorCode::kSequenceGap, "producer " + stamp.id.str() +
                                                " is new to this session and must start at seq 0");
    }
  }
  if (request.expected_tail && *request.expected_tail != epoch.tail) {
    return Error(ErrorCode::kConflict, "expected tail " + Num(request.expected_tail->value()) +
                                           " but " + request.session.str() + " is at " +
                                           Num(epoch.tail.value()));
  }
  const Seq first = epoch.tail.next();
  plan.result =
      AppendResult{current, first, Seq(epoch.tail.value() + request.events.size()), false};
  if (request.producer) {
    plan.producer_id = request.producer->id.str();
    plan.producer = ProducerState{request.producer->epoch, request.producer->seq,
                                  plan.result.first_seq, plan.result.last_seq};
  }
  plan.meta = MetaAfter(session.meta, request.events);
  return plan;
}

void ApplyAppend(SessionState& session, const AppendPlan& plan) {
  if (plan.result.duplicate) return;
  session.epochs.back().tail = plan.result.last_seq;
  if (plan.producer) session.producers[plan.producer_id] = *plan.producer;
  if (plan.meta) session.meta = *plan.meta;
}

std::optional<SessionMeta> MetaAfter(const SessionMeta& meta, const std::vector<NewEvent>& events) {
  std::optional<SessionMeta> after;
  for (const NewEvent& event : events) {
    if (event.kind != EventKind::kSessionTitled) continue;
    // CheckBatch decoded every payload already: this cannot fail.
    Result<Payload> payload =
        DecodePayload(static_cast<std::uint16_t>(event.kind), kEventFormatVersion, event.payload);
    if (!payload.ok()) continue;
    const std::string& title = std::get<SessionTitled>(*payload).title;
    // PostgreSQL text holds no NUL: such a title stays in the event and is not taken, on every
    // backend alike.
    if (title.find('\0') != std::string::npos) continue;
    if (!after) after = meta;
    after->title = title;
  }
  if (meta.usage) {
    if (std::optional<Usage> used = UsageIn(events)) {
      if (!after) after = meta;
      AddUsage(*after->usage, *used);
    }
  }
  return after;
}

SessionMeta NewSessionMeta(SessionMeta meta, const std::vector<NewEvent>& initial,
                           TimestampMs now_ms) {
  if (meta.created_ms == 0) meta.created_ms = now_ms;
  meta.usage = Usage{};
  if (std::optional<SessionMeta> after = MetaAfter(meta, initial)) return std::move(*after);
  return meta;
}

std::string EncodeUsageTotals(const std::optional<Usage>& usage) {
  return usage ? EncodePayload(*usage) : std::string();
}

std::optional<Usage> DecodeUsageTotals(std::string_view text) {
  if (text.empty()) return std::nullopt;
  Result<Payload> payload =
      DecodePayload(static_cast<std::uint16_t>(EventKind::kUsage), kEventFormatVersion, text);
  if (!payload.ok()) return std::nullopt;
  return std::get<Usage>(*payload);
}

Status CheckPrefix(const SessionState& session, const SessionId& id, Cursor at) {
  const EpochState* epoch = session.epoch(at.epoch);
  if (epoch == nullptr) {
    return Error(ErrorCode::kNotFound, id.str() + " has no epoch " + Num(at.epoch.value()));
  }
  if (at.seq > epoch->tail) {
    return Error(ErrorCode::kInvalidArgument, "cursor " + FormatCursor(at) +
                                                  " is beyond the tail " +
                                                  Num(epoch->tail.value()) + " of " + id.str());
  }
  return Status::Ok();
}

EpochState ContinueFrom(const HistoryBase& base) { return EpochState{base, base.seq}; }

std::uint64_t RecordChecksum(const EventRecord& record) {
  return RecordChecksum(record.seq, record.time, record.kind, record.format, record.turn,
                        record.payload);
}

std::uint64_t RecordChecksum(Seq seq, TimestampMs time, std::uint16_t kind, std::uint32_t format,
                             const std::optional<TurnId>& turn, std::string_view payload) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const std::uint64_t seq_value = seq.value();
  const std::uint32_t kind_value = kind;
  XXH3_64bits_update(&state, &seq_value, sizeof seq_value);
  XXH3_64bits_update(&state, &time, sizeof time);
  XXH3_64bits_update(&state, &kind_value, sizeof kind_value);
  XXH3_64bits_update(&state, &format, sizeof format);
  const std::uint64_t turn_size = turn ? turn->str().size() + 1 : 0;
  XXH3_64bits_update(&state, &turn_size, sizeof turn_size);
  if (turn) XXH3_64bits_update(&state, turn->str().data(), turn->str().size());
  XXH3_64bits_update(&state, payload.data(), payload.size());
  // Stored in a signed 64-bit column; keep it positive-stable across backends.
  return XXH3_64bits_digest(&state) & 0x7fffffffffffffffULL;
}

Status VerifyRow(const StoredRow& row) {
  const EventRecord& r = row.record;
  const std::string where = r.session.str() + "@" + FormatCursor(r.cursor());
  if (r.format > kEventFormatVersion) {
    return Error(ErrorCode::kUnsupportedVersion, "stored event " + where + " has format " +
                                                     Num(r.format) + ", newer than this build (" +
                                                     Num(kEventFormatVersion) + ")");
  }
  if (r.format == 0 || !IsKnownEventKind(r.kind) || RecordChecksum(r) != row.checksum) {
    return Error(ErrorCode::kCorruption, "stored event " + where + " fails its check (format " +
                                             Num(r.format) + ", kind " + Num(r.kind) +
                                             "); the stored bytes are damaged");
  }
  return Status::Ok();
}

Result<std::vector<Segment>> ResolveSegments(const SessionId& session, Epoch epoch, Seq tail,
                                             const BaseLookup& lookup) {
  std::vector<Segment> reversed;
  SessionId s = session;
  Epoch e = epoch;
  Seq hi = tail;
  // Each hop is a fork or a rewind; a chain is bounded by the number of epochs ever made.
  for (int hops = 0; hops < 100000; ++hops) {
    auto base = lookup(s, e);
    if (!base.ok()) return base.status();
    const Seq base_seq = base.value() ? base.value()->seq : Seq(0);
    if (hi > base_seq) reversed.push_back(Segment{s, e, base_seq.next(), hi});
    if (!base.value() || base_seq.value() == 0) {
      std::reverse(reversed.begin(), reversed.end());
      return reversed;
    }
    hi = std::min(hi, base_seq);
    s = base.value()->session;
    e = base.value()->epoch;
  }
  return Error(ErrorCode::kCorruption, "history of " + session.str() + " has a cycle");
}

namespace {

// Appends rows for [lo, hi] of the chain, walking segments in the read's direction.
Status CollectRows(const std::vector<Segment>& segments, Seq lo, Seq hi, bool backward,
                   std::size_t limit, const RowReader& reader, std::vector<StoredRow>& out) {
  auto visit = [&](const Segment& seg) -> Status {
    const Seq a = std::max(seg.lo, lo);
    const Seq b = std::min(seg.hi, hi);
    if (a > b || out.size() >= limit) return Status::Ok();
    std::vector<StoredRow> rows;
    AS_RETURN_IF_ERROR(reader(seg, a, b, backward, limit - out.size(), rows));
    if (backward) std::reverse(rows.begin(), rows.end());
    for (auto& row : rows) out.push_back(std::move(row));
    return Status::Ok();
  };
  if (backward) {
    for (auto it = segments.rbegin(); it != segments.rend(); ++it) AS_RETURN_IF_ERROR(visit(*it));
  } else {
    for (const auto& seg : segments) AS_RETURN_IF_ERROR(visit(seg));
  }
  return Status::Ok();
}

}  // namespace

Result<ReadResult> ReadSegments(const ReadRequest& request, const SessionId& session, Epoch epoch,
                                Seq tail, const std::vector<Segment>& segments,
                                const LogLimits& limits, const RowReader& reader) {
  ReadResult result;
  result.epoch = epoch;
  result.tail = tail;
  const std::size_t max_items =
      std::clamp<std::size_t>(request.max_items, 1, limits.max_read_items);
  const std::size_t max_bytes =
      std::clamp<std::size_t>(request.max_bytes, 1, limits.max_read_bytes);
  const bool backward = request.direction == ReadDirection::kBackward;
  Seq lo, hi;
  if (backward) {
    hi = (request.from.value() == 0 || request.from > tail) ? tail : Seq(request.from.value() - 1);
    lo = Seq(hi.value() >= max_items ? hi.value() - max_items + 1 : 1);
  } else {
    lo = std::max(request.from, Seq(1));
    hi = Seq(std::min(tail.value(), lo.value() + max_items - 1));
  }
  if (hi.value() == 0 || lo > hi) {
    result.has_older = backward ? hi.value() > 0 : tail.value() > 0;
    result.has_newer = false;
    return result;
  }
  std::vector<StoredRow> rows;
  AS_RETURN_IF_ERROR(CollectRows(segments, lo, hi, backward, max_items, reader, rows));
  // Rows arrive newest-first for a backward read; check, budget and re-address them.
  std::size_t bytes = 0;
  Seq expect = backward ? hi : lo;
  for (auto& row : rows) {
    if (row.record.seq != expect) {
      return Error(ErrorCode::kCorruption, session.str() + " epoch " + Num(epoch.value()) +
                                               " is missing seq " + Num(expect.value()));
    }
    row.record.session = session;
    row.record.epoch = epoch;
    AS_RETURN_IF_ERROR(VerifyRow(row));
    if (!result.events.empty() && bytes + row.record.payload.size() > max_bytes) break;
    bytes += row.record.payload.size();
    result.events.push_back(std::move(row.record));
    expect = backward ? Seq(expect.value() - 1) : expect.next();
  }
  if (result.events.empty()) {
    return Error(ErrorCode::kCorruption, session.str() + " epoch " + Num(epoch.value()) +
                                             " is missing seq " + Num(expect.value()));
  }
  if (backward) std::reverse(result.events.begin(), result.events.end());
  result.has_older = result.events.front().seq.value() > 1;
  result.has_newer = result.events.back().seq < tail;
  return result;
}

Result<ConsumerPosition> GrantLease(std::optional<ConsumerPosition> row, const ConsumerId& consumer,
                                    const SessionId& session, const std::string& owner,
                                    TimestampMs now_ms, std::int64_t ttl_ms) {
  if (owner.empty()) return Error(ErrorCode::kInvalidArgument, "a lease owner must be named");
  if (ttl_ms <= 0) return Error(ErrorCode::kInvalidArgument, "a lease needs a positive ttl");
  ConsumerPosition pos =
      row ? std::move(*row)
          : ConsumerPosition{consumer, session, Cursor{Epoch(1), Seq(0)}, "", 0, 0, ""};
  const bool held = !pos.lease_owner.empty() && pos.lease_expires_ms > now_ms;
  if (held && pos.lease_owner != owner) {
    return Error(ErrorCode::kConflict, "the lease of " + consumer.str() + " on " + session.str() +
                                           " is held by " + pos.lease_owner);
  }
  if (!held) ++pos.generation;
  pos.lease_owner = owner;
  pos.lease_expires_ms = now_ms + ttl_ms;
  return pos;
}

Status CheckLeaseHolder(const std::optional<ConsumerPosition>& row, std::uint64_t generation,
                        TimestampMs now_ms) {
  if (!row || row->generation != generation || row->lease_owner.empty()) {
    return Error(ErrorCode::kFenced, "lease generation " + Num(generation) + " is not current");
  }
  if (row->lease_expires_ms <= now_ms) {
    return Error(ErrorCode::kFenced, "lease generation " + Num(generation) + " has expired");
  }
  return Status::Ok();
}

Result<ConsumerPosition> CommitPosition(std::optional<ConsumerPosition> row,
                                        std::uint64_t generation, Cursor position,
                                        std::optional<std::string> adapter_state,
                                        TimestampMs now_ms) {
  AS_RETURN_IF_ERROR(CheckLeaseHolder(row, generation, now_ms));
  row->position = position;
  if (adapter_state) row->adapter_state = std::move(*adapter_state);
  return std::move(*row);
}

Result<ConsumerPosition> ReleasePosition(std::optional<ConsumerPosition> row,
                                         std::uint64_t generation) {
  if (!row || row->generation != generation)
    return Error(ErrorCode::kFenced, "lease generation " + Num(generation) + " is not current");
  row->lease_owner.clear();
  row->lease_expires_ms = 0;
  return std::move(*row);
}

}  // namespace agentstream::store_internal

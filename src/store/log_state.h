// Internal to the store module: the rules every EventLog backend shares, as pure functions over
// an in-memory picture of a session. Backends differ only in where rows live and how they are
// committed; what may be appended, where a read looks, and how a stored row is checked are
// decided here once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/event_log.h"

namespace agentstream::store_internal {

struct EpochState {
  std::optional<HistoryBase> base;  // the prefix this epoch continues; absent for a root epoch
  Seq tail;                         // last seq of this epoch (>= base->seq)
  Seq base_seq() const { return base ? base->seq : Seq(0); }
};

struct ProducerState {
  std::uint64_t epoch = 0;
  std::uint64_t seq = 0;
  Seq first_seq;  // what the producer's last accepted append received
  Seq last_seq;
};

struct SessionState {
  SessionMeta meta;
  std::optional<HistoryBase> forked_from;
  OwnerLease owner;                // now_ms unused
  std::vector<EpochState> epochs;  // epochs[i] is epoch i + 1; the last one is current
  std::unordered_map<std::string, ProducerState> producers;

  Epoch current() const { return Epoch(epochs.size()); }
  const EpochState* epoch(Epoch e) const {
    return e.value() >= 1 && e.value() <= epochs.size() ? &epochs[e.value() - 1] : nullptr;
  }
};

// A session's row as a backend's snapshot reads it: its key in the store's tables, its current
// epoch, its meta, the session it was forked from, and its ownership lease.
struct SessionRow {
  std::int64_t key = 0;
  Epoch current;
  SessionMeta meta;
  std::optional<HistoryBase> forked_from;
  OwnerLease owner;
};

// What an accepted append will do: its result, and the producer state and session meta to store
// with it.
struct AppendPlan {
  AppendResult result;
  std::optional<ProducerState> producer;  // set when the request carried a stamp
  std::string producer_id;
  std::optional<SessionMeta> meta;  // set when the events change the title or the usage totals
};

// The meta of a session after `events` (which passed CheckBatch): the title of the last
// session.titled event, the usage totals plus every usage event. nullopt when they change neither.
std::optional<SessionMeta> MetaAfter(const SessionMeta& meta, const std::vector<NewEvent>& events);

// The meta a new session (created or forked) is stored with: `meta` as the caller gave it, its
// creation time `now_ms` when it has none, zero usage totals, then `initial` applied.
SessionMeta NewSessionMeta(SessionMeta meta, const std::vector<NewEvent>& initial,
                           TimestampMs now_ms);

// Usage totals as stored (the usage event's JSON object), and back; "" is nullopt (none kept).
std::string EncodeUsageTotals(const std::optional<Usage>& usage);
std::optional<Usage> DecodeUsageTotals(std::string_view text);

// Checks a batch against the limits and each event against its kind's schema.
Status CheckBatch(const std::vector<NewEvent>& events, const LogLimits& limits, bool allow_empty);

// Decides whether `request` may be appended to `session`. Pure; the batch must have passed
// CheckBatch. A duplicate producer append yields a plan with result.duplicate set.
Result<AppendPlan> PlanAppend(const SessionState& session, const AppendRequest& request);

// The ownership fence (coordination.h): kFenced when `generation` is given and is not the
// session's current ownership generation. PlanAppend applies it first.
Status CheckOwner(const SessionState& session, const SessionId& id,
                  std::optional<std::uint64_t> generation);

// Whether `checkpoint` may be stored for `session` (EventLog::SaveCheckpoint's errors but
// kNotFound).
Status CheckCheckpoint(const SessionState& session, const SessionId& id,
                       const Checkpoint& checkpoint, const LogLimits& limits);

// Ownership rules shared by the backends; `now_ms` is the store's clock. GrantOwnership decides
// and records a grant in `session` (kConflict while another owner's lease is live);
// RenewOwnership extends the lease when `owner` still holds `generation` (false: lost);
// ReleaseOwnership frees it (kFenced for another generation).
Result<OwnerGrant> GrantOwnership(SessionState& session, const SessionId& id,
                                  const std::string& owner, TimestampMs now_ms,
                                  std::int64_t ttl_ms);
bool RenewOwnership(SessionState& session, const std::string& owner, std::uint64_t generation,
                    TimestampMs now_ms, std::int64_t ttl_ms);
Status ReleaseOwnership(SessionState& session, const SessionId& id, std::uint64_t generation);

// Whether `self` may register over the `stored` record of its id (empty id: none stored):
// kAlreadyExists when another live daemon (heartbeat younger than ttl_ms) holds it from another
// host or data directory.
Status CheckDaemonIdentity(const DaemonRecord& stored, const DaemonRecord& self, TimestampMs now_ms,
                           std::int64_t ttl_ms);

// Records an accepted plan in the picture (tail and producer state).
void ApplyAppend(SessionState& session, const AppendPlan& plan);

// Checks that `at` names an existing prefix of `session`.
Status CheckPrefix(const SessionState& session, const SessionId& id, Cursor at);

// The state of a new epoch that continues the prefix `base`.
EpochState ContinueFrom(const HistoryBase& base);

// A checksum over what a stored row says (seq, time, kind, format, turn, payload).
std::uint64_t RecordChecksum(const EventRecord& record);
std::uint64_t RecordChecksum(Seq seq, TimestampMs time, std::uint16_t kind, std::uint32_t format,
                             const std::optional<TurnId>& turn, std::string_view payload);

// A stored row as a backend returns it, before it is checked.
struct StoredRow {
  EventRecord record;
  std::uint64_t checksum = 0;
};

// Checks a stored row: format version first (kUnsupportedVersion), then checksum and kind
// (kCorruption).
Status VerifyRow(const StoredRow& row);

// The rows of one (session, epoch) that a history reads, seqs [lo, hi].
struct Segment {
  SessionId session;
  Epoch epoch;
  Seq lo;
  Seq hi;
};

// Finds the base of (session, epoch), or nullopt for a root epoch; an error when unknown.
using BaseLookup =
    std::function<Result<std::optional<HistoryBase>>(const SessionId& session, Epoch epoch)>;

// The segments, oldest first, that hold history [1, tail] of (session, epoch).
Result<std::vector<Segment>> ResolveSegments(const SessionId& session, Epoch epoch, Seq tail,
                                             const BaseLookup& lookup);

// Reads the rows of `segment` with seqs in [lo, hi], ascending, at most `limit` (from the low end
// when reading forward, from the high end when reading backward).
using RowReader = std::function<Status(const Segment& segment, Seq lo, Seq hi, bool backward,
                                       std::size_t limit, std::vector<StoredRow>& out)>;

// Runs a read over resolved segments: bounds, direction, byte budget, row checks, density
// (a missing seq is kCorruption), and re-addressing rows to the requested session and epoch.
Result<ReadResult> ReadSegments(const ReadRequest& request, const SessionId& session, Epoch epoch,
                                Seq tail, const std::vector<Segment>& segments,
                                const LogLimits& limits, const RowReader& reader);

// Lease rules shared by the backends. `row` is the stored position (nullopt when none).
Result<ConsumerPosition> GrantLease(std::optional<ConsumerPosition> row, const ConsumerId& consumer,
                                    const SessionId& session, const std::string& owner,
                                    TimestampMs now_ms, std::int64_t ttl_ms);
Status CheckLeaseHolder(const std::optional<ConsumerPosition>& row, std::uint64_t generation,
                        TimestampMs now_ms);
// The row after lease `generation` commits `position` (and `adapter_state` when given); the
// errors of CheckLeaseHolder.
Result<ConsumerPosition> CommitPosition(std::optional<ConsumerPosition> row,
                                        std::uint64_t generation, Cursor position,
                                        std::optional<std::string> adapter_state,
                                        TimestampMs now_ms);
// The row after lease `generation` is released; kFenced when that generation is not current.
Result<ConsumerPosition> ReleasePosition(std::optional<ConsumerPosition> row,
                                         std::uint64_t generation);

}  // namespace agentstream::store_internal

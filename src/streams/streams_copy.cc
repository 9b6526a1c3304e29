#include "streams/streams_copy.h"

#include <sodium.h>

#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/name_list.h"
#include "streams/stream_journal.h"
#include "streams/stream_rules.h"
#include "streams/streams_copy_side.h"

namespace agentstream::streams {

// What the copy does with one stream of the source (outside the anonymous namespace: a member of
// StreamsCopy::Impl holds them).
namespace copy {
struct StreamPlan {
  StoredStream source;
  std::optional<StoredStream> dest;  // as the destination holds it
  std::optional<Offset> after;       // the destination's last own message
  std::int64_t copied = 0;           // the destination's own messages
};
}  // namespace copy

namespace {

using copy::Side;
using copy::StoredStream;
using copy::StreamPlan;

Result<std::unique_ptr<Side>> OpenSide(const StreamsConfig& config, const std::string& name,
                                       bool create) {
  if (IsPostgresStreams(config.store_url))
    return copy::OpenPostgresSide(config.store_url, name, create);
  if (config.streams_db.empty())
    return Error(ErrorCode::kInvalidArgument,
                 "the streams of " + config.store_url + " are in memory: there is nothing to copy");
  return copy::OpenJournalSide(config.streams_db, create);
}

// True when `a` and `b` are the same journal file.
bool SameJournal(const StreamsConfig& a, const StreamsConfig& b) {
  if (IsPostgresStreams(a.store_url) || IsPostgresStreams(b.store_url)) return false;
  if (a.streams_db.empty() || b.streams_db.empty()) return false;
  std::error_code ec;
  return std::filesystem::weakly_canonical(a.streams_db, ec) ==
         std::filesystem::weakly_canonical(b.streams_db, ec);
}

// Where a stream's own messages start: its fork offset, or zero.
Offset Base(const StreamMeta& meta) { return meta.forked_from ? meta.fork_offset : Offset{}; }

// The stored state of a stream, its side's id aside.
std::string StateText(StreamMeta meta) {
  meta.id = 0;
  return EncodeMeta(meta);
}

// True when `a` and `b` were created alike: what a stream never changes after its creation.
bool SameOrigin(const StreamMeta& a, const StreamMeta& b) {
  return a.content_type == b.content_type && a.created_ms == b.created_ms &&
         a.ttl_seconds == b.ttl_seconds && a.expires_at == b.expires_at &&
         a.expires_at_ms == b.expires_at_ms && a.forked_from == b.forked_from &&
         (!a.forked_from ||
          (a.fork_offset == b.fork_offset && a.fork_sub_offset == b.fork_sub_offset));
}

std::string Named(const std::vector<std::string>& names) {
  return NameList(names, kStreamsNamedInError);
}

// The streams to copy, by id: all but those deleted or expired at `now_ms` that no stream to
// copy reads through. A fork comes after its source (ids grow), so one pass from the end finds
// them.
std::vector<StoredStream> ToCopy(std::vector<StoredStream> streams, std::int64_t now_ms,
                                 std::int64_t* left) {
  std::set<std::string> read_through;
  std::vector<bool> keep(streams.size());
  for (std::size_t i = streams.size(); i-- > 0;) {
    const StoredStream& s = streams[i];
    const bool dead =
        s.meta.soft_deleted || Expired(s.meta, s.last_access_ms.value_or(now_ms), now_ms);
    keep[i] = !dead || read_through.count(s.meta.path) > 0;
    if (keep[i] && s.meta.forked_from) read_through.insert(*s.meta.forked_from);
  }
  std::vector<StoredStream> out;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (keep[i]) {
      out.push_back(std::move(streams[i]));
    } else {
      ++*left;
    }
  }
  return out;
}

// SHA-256 over a stream's stored state, tail and own messages.
class Sha256 {
 public:
  Sha256() { crypto_hash_sha256_init(&state_); }
  void Add(std::string_view bytes) {
    crypto_hash_sha256_update(&state_, reinterpret_cast<const unsigned char*>(bytes.data()),
                              bytes.size());
  }
  void AddLength(std::uint64_t n) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(n >> (8 * i));
    crypto_hash_sha256_update(&state_, le, sizeof le);
  }
  std::string Hex() {
    unsigned char out[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_final(&state_, out);
    std::string hex(2 * sizeof out + 1, '\0');
    sodium_bin2hex(hex.data(), hex.size(), out, sizeof out);
    hex.pop_back();
    return hex;
  }

 private:
  crypto_hash_sha256_state state_;
};

Result<StreamDigest> Digest(Side& side, const StoredStream& s) {
  Sha256 sha;
  const std::string state = StateText(s.meta);
  sha.AddLength(state.size());
  sha.Add(state);
  StreamDigest digest{s.meta.path, 0, FormatOffset(s.tail), ""};
  sha.Add(digest.tail);
  std::optional<Offset> after;
  for (;;) {
    AS_ASSIGN_OR_RETURN(
        std::vector<Message> chunk,
        side.Messages(s.meta.id, after, kStreamsCopyChunkMessages, kStreamsCopyChunkBytes));
    if (chunk.empty()) break;
    for (const Message& m : chunk) {
      sha.Add(FormatOffset(m.offset));
      sha.AddLength(m.data->size());
      sha.Add(*m.data);
    }
    digest.messages += static_cast<std::int64_t>(chunk.size());
    after = chunk.back().offset;
  }
  digest.sha256 = sha.Hex();
  return digest;
}

// Compares the destination's stream `d` with the source's `s`: "" when `d` holds a prefix of
// `s` (recorded in `plan`), else why not.
Result<std::string> ComparePrefix(Side& from, Side& to, const StoredStream& s,
                                  const StoredStream& d, StreamPlan* plan) {
  if (!SameOrigin(s.meta, d.meta))
    return std::string("its content type, creation time, TTL, expiry or fork differs");
  std::optional<Offset> after;
  for (;;) {
    AS_ASSIGN_OR_RETURN(
        std::vector<Message> have,
        to.Messages(d.meta.id, after, kStreamsCopyChunkMessages, kStreamsCopyChunkBytes));
    if (have.empty()) break;
    AS_ASSIGN_OR_RETURN(
        std::vector<Message> want,
        from.Messages(s.meta.id, after, have.size(), std::numeric_limits<std::size_t>::max()));
    for (std::size_t i = 0; i < have.size(); ++i) {
      const std::string at = FormatOffset(have[i].offset);
      if (i >= want.size()) return "it holds a message at " + at + " the source does not";
      if (want[i].offset != have[i].offset || *want[i].data != *have[i].data)
        return "its message at " + at + " differs";
    }
    plan->copied += static_cast<std::int64_t>(have.size());
    after = have.back().offset;
  }
  plan->after = after;
  return std::string();
}

}  // namespace

class StreamsCopy::Impl {
 public:
  Impl(StreamsConfig from, StreamsConfig to, StreamsCopyOptions options)
      : from_config_(std::move(from)), to_config_(std::move(to)), options_(std::move(options)) {}

  Status Check() {
    AS_RETURN_IF_ERROR(OpenSides());
    Phase("streams-check");
    AS_ASSIGN_OR_RETURN(std::vector<StoredStream> all, from_->Streams());
    AS_ASSIGN_OR_RETURN(const std::int64_t now, from_->NowMs());
    std::vector<StoredStream> sources = ToCopy(std::move(all), now, &report_.streams_left);
    AS_ASSIGN_OR_RETURN(std::vector<StoredStream> dests, to_->Streams());
    std::map<std::string, StoredStream> by_path;
    for (StoredStream& d : dests) by_path.emplace(d.meta.path, std::move(d));
    progress_.streams_total = static_cast<std::int64_t>(sources.size());
    std::vector<std::string> conflicts;
    std::string first_reason;
    for (StoredStream& s : sources) {
      StreamPlan plan{std::move(s), std::nullopt, std::nullopt, 0};
      if (auto d = by_path.find(plan.source.meta.path); d != by_path.end()) {
        AS_ASSIGN_OR_RETURN(std::string reason,
                            ComparePrefix(*from_, *to_, plan.source, d->second, &plan));
        if (!reason.empty()) {
          if (conflicts.empty()) first_reason = plan.source.meta.path + ": " + reason;
          conflicts.push_back(plan.source.meta.path);
          continue;
        }
        plan.dest = d->second;
      }
      progress_.messages_total += plan.source.messages;
      progress_.messages_done += plan.copied;
      ++progress_.streams_done;
      Report();
      plans_.push_back(std::move(plan));
    }
    report_.streams = progress_.streams_total;
    report_.messages = progress_.messages_total;
    if (!conflicts.empty()) {
      return Error(ErrorCode::kConflict,
                   std::to_string(conflicts.size()) +
                       " streams of the source hold other content at the destination (" +
                       Named(conflicts) + "); the first: " + first_reason + ". Nothing was copied");
    }
    return CheckKeys();
  }

  Result<StreamsCopyReport> Copy() {
    const std::int64_t done = progress_.messages_done;
    Phase("streams-copy");
    progress_.messages_done = done;
    for (const StreamPlan& plan : plans_) {
      AS_RETURN_IF_ERROR(CopyStream(plan));
      ++progress_.streams_done;
      Report();
    }
    AS_RETURN_IF_ERROR(CopySubscriptions());
    AS_RETURN_IF_ERROR(to_->Sync());
    AS_RETURN_IF_ERROR(Verify());
    return report_;
  }

 private:
  Status OpenSides() {
    const std::string from_name =
        options_.from_name.empty() ? from_config_.store_url : options_.from_name;
    const std::string to_name = options_.to_name.empty() ? to_config_.store_url : options_.to_name;
    if (SameJournal(from_config_, to_config_)) {
      return Error(ErrorCode::kInvalidArgument, "both stores keep their generic streams in " +
                                                    to_config_.streams_db +
                                                    ": name another data directory for the copy's");
    }
    AS_ASSIGN_OR_RETURN(from_, OpenSide(from_config_, from_name, false));
    AS_ASSIGN_OR_RETURN(to_, OpenSide(to_config_, to_name, true));
    return Status::Ok();
  }

  void Phase(const char* phase) {
    progress_.phase = phase;
    progress_.streams_done = 0;
    Report();
  }
  void Report() {
    if (options_.progress) options_.progress(progress_);
  }

  // The keys go with the subscriptions: refused when the destination keeps other keys and
  // subscriptions made with them that the source does not have.
  Status CheckKeys() {
    AS_ASSIGN_OR_RETURN(source_keys_, from_->Keys());
    AS_ASSIGN_OR_RETURN(const std::string dest_keys, to_->Keys());
    if (source_keys_.empty() || dest_keys.empty() || dest_keys == source_keys_) return Status::Ok();
    AS_ASSIGN_OR_RETURN(const auto source_subs, from_->Subscriptions());
    AS_ASSIGN_OR_RETURN(const auto dest_subs, to_->Subscriptions());
    std::vector<std::string> others;
    for (const auto& [id, record] : dest_subs)
      if (source_subs.count(id) == 0) others.push_back(id);
    if (others.empty()) return Status::Ok();
    return Error(ErrorCode::kConflict,
                 to_->name() + " holds subscriptions the source does not (" + Named(others) +
                     "), made with other keys than the source's: their webhook signatures and "
                     "callback tokens would no longer verify. Nothing was copied");
  }

  std::optional<std::int64_t> DestId(const std::optional<std::string>& path) const {
    if (!path) return std::nullopt;
    auto it = dest_ids_.find(*path);
    if (it == dest_ids_.end()) return std::nullopt;
    return it->second;
  }

  Status CopyStream(const StreamPlan& plan) {
    const StoredStream& s = plan.source;
    bool wrote = false;
    std::int64_t id = 0;
    if (plan.dest) {
      id = plan.dest->meta.id;
    } else {
      StoredStream fresh = s;
      fresh.meta.id = 0;
      fresh.tail = Base(s.meta);
      if (!from_->keeps_access_times()) fresh.last_access_ms.reset();
      AS_ASSIGN_OR_RETURN(id, to_->PutStream(fresh, DestId(s.meta.forked_from)));
      wrote = true;
    }
    dest_ids_[s.meta.path] = id;
    std::optional<Offset> after = plan.after;
    for (;;) {
      AS_ASSIGN_OR_RETURN(
          std::vector<Message> chunk,
          from_->Messages(s.meta.id, after, kStreamsCopyChunkMessages, kStreamsCopyChunkBytes));
      if (chunk.empty()) break;
      AS_RETURN_IF_ERROR(to_->AddMessages(id, chunk));
      const auto n = static_cast<std::int64_t>(chunk.size());
      report_.messages_copied += n;
      progress_.messages_done += n;
      after = chunk.back().offset;
      wrote = true;
      Report();
    }
    if (plan.dest && StateText(plan.dest->meta) != StateText(s.meta)) {
      StoredStream state = s;
      state.meta.id = id;
      AS_RETURN_IF_ERROR(to_->PutStream(state, DestId(s.meta.forked_from)).status());
      wrote = true;
    }
    if (wrote) ++report_.streams_copied;
    return Status::Ok();
  }

  Status CopySubscriptions() {
    AS_ASSIGN_OR_RETURN(source_subs_, from_->Subscriptions());
    AS_ASSIGN_OR_RETURN(const auto dest_subs, to_->Subscriptions());
    report_.subscriptions = static_cast<std::int64_t>(source_subs_.size());
    for (const auto& [id, record] : source_subs_) {
      auto it = dest_subs.find(id);
      if (it != dest_subs.end() && it->second == record) continue;
      AS_RETURN_IF_ERROR(to_->PutSubscription(id, record));
      ++report_.subscriptions_copied;
    }
    AS_ASSIGN_OR_RETURN(const std::string dest_keys, to_->Keys());
    if (source_keys_.empty() || dest_keys == source_keys_) return Status::Ok();
    AS_RETURN_IF_ERROR(to_->PutKeys(source_keys_));
    report_.keys_copied = true;
    return Status::Ok();
  }

  Status Verify() {
    Phase("streams-verify");
    AS_ASSIGN_OR_RETURN(std::vector<StoredStream> dests, to_->Streams());
    std::map<std::string, const StoredStream*> by_path;
    for (const StoredStream& d : dests) by_path[d.meta.path] = &d;
    for (const StreamPlan& plan : plans_) {
      const std::string& path = plan.source.meta.path;
      AS_ASSIGN_OR_RETURN(StreamDigest want, Digest(*from_, plan.source));
      auto d = by_path.find(path);
      if (d == by_path.end())
        return Error(ErrorCode::kCorruption, "the stream " + path + " is missing after the copy");
      AS_ASSIGN_OR_RETURN(StreamDigest have, Digest(*to_, *d->second));
      if (want.sha256 != have.sha256 || want.messages != have.messages || want.tail != have.tail) {
        return Error(ErrorCode::kCorruption,
                     "the stream " + path + " differs after the copy: " +
                         std::to_string(want.messages) + " messages to " + want.tail + ", sha256 " +
                         want.sha256 + " in the source; " + std::to_string(have.messages) +
                         " messages to " + have.tail + ", sha256 " + have.sha256 + " in the copy");
      }
      report_.digests.push_back(std::move(want));
      ++progress_.streams_done;
      Report();
    }
    return VerifySubscriptions();
  }

  Status VerifySubscriptions() {
    AS_ASSIGN_OR_RETURN(const auto dest_subs, to_->Subscriptions());
    for (const auto& [id, record] : source_subs_) {
      auto it = dest_subs.find(id);
      if (it == dest_subs.end() || it->second != record)
        return Error(ErrorCode::kCorruption, "the subscription " + id + " differs after the copy");
    }
    AS_ASSIGN_OR_RETURN(const std::string dest_keys, to_->Keys());
    if (!source_keys_.empty() && dest_keys != source_keys_)
      return Error(ErrorCode::kCorruption, "the subscription keys differ after the copy");
    return Status::Ok();
  }

  const StreamsConfig from_config_;
  const StreamsConfig to_config_;
  const StreamsCopyOptions options_;
  std::unique_ptr<Side> from_;
  std::unique_ptr<Side> to_;
  std::vector<StreamPlan> plans_;
  std::map<std::string, std::int64_t> dest_ids_;  // path -> the destination's id
  std::string source_keys_;
  std::map<std::string, std::string> source_subs_;
  StreamsCopyProgress progress_;
  StreamsCopyReport report_;
};

StreamsCopy::StreamsCopy(StreamsConfig from, StreamsConfig to, StreamsCopyOptions options)
    : impl_(std::make_unique<Impl>(std::move(from), std::move(to), std::move(options))) {}

StreamsCopy::~StreamsCopy() = default;

Status StreamsCopy::Check() { return impl_->Check(); }

Result<StreamsCopyReport> StreamsCopy::Copy() { return impl_->Copy(); }

}  // namespace agentstream::streams

#include "streams/stream_rules.h"

#include <algorithm>
#include <cctype>

#include "core/ascii.h"
#include "streams/json_mode.h"

namespace agentstream::streams {

std::string NormalizeContentType(std::string_view content_type) {
  const std::size_t semi = content_type.find(';');
  std::string_view type = content_type.substr(0, semi);
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.front())))
    type.remove_prefix(1);
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.back())))
    type.remove_suffix(1);
  return AsciiLowered(type);
}

bool IsJsonType(const std::string& content_type) {
  return NormalizeContentType(content_type) == "application/json";
}

bool SameConfig(const CreateArgs& args, const StreamMeta& m) {
  auto type_or_default = [](const std::string& t) {
    std::string n = NormalizeContentType(t);
    return n.empty() ? std::string("application/octet-stream") : n;
  };
  return type_or_default(args.content_type) == type_or_default(m.content_type) &&
         args.ttl_seconds == m.ttl_seconds && args.expires_at == m.expires_at &&
         args.closed == m.closed && args.forked_from == m.forked_from &&
         (!args.fork_offset || *args.fork_offset == m.fork_offset) &&
         args.fork_sub_offset.value_or(0) == m.fork_sub_offset;
}

bool ExpiresBeforeCreation(const CreateArgs& args, std::int64_t now_ms) {
  return args.expires_at && args.expires_at_ms <= now_ms;
}

NewStream PlanCreate(const CreateArgs& args, const ForkSource* source) {
  NewStream out;
  StreamMeta& m = out.meta;
  m.path = args.path;
  m.content_type = args.content_type;
  m.ttl_seconds = args.ttl_seconds;
  m.expires_at = args.expires_at;
  m.expires_at_ms = args.expires_at_ms;
  auto refuse = [&](Code code) {
    out.code = code;
    return out;
  };
  if (source != nullptr) {
    const StreamMeta& src = *source->meta;
    if (!args.content_type.empty() &&
        NormalizeContentType(args.content_type) != NormalizeContentType(src.content_type))
      return refuse(Code::kForkTypeMismatch);
    const Offset fork_offset = args.fork_offset.value_or(source->tail);
    if (source->tail < fork_offset) return refuse(Code::kBadForkOffset);
    if (args.fork_sub_offset.value_or(0) > 0) {
      std::optional<std::string> first =
          source->first_after ? source->first_after(fork_offset) : std::nullopt;
      if (!first) return refuse(Code::kBadSubOffset);
      if (IsJsonType(src.content_type)) {
        auto p = JsonPrefix(*first, *args.fork_sub_offset);
        if (!p.ok()) return refuse(Code::kBadSubOffset);
        out.prefix = std::move(*p);
      } else {
        if (*args.fork_sub_offset > first->size()) return refuse(Code::kBadSubOffset);
        out.prefix = first->substr(0, *args.fork_sub_offset);
      }
      m.fork_sub_offset = *args.fork_sub_offset;
    }
    if (m.content_type.empty()) m.content_type = src.content_type;
    if (!m.ttl_seconds && !m.expires_at) {
      m.ttl_seconds = src.ttl_seconds;
      if (!m.ttl_seconds) {
        m.expires_at = src.expires_at;
        m.expires_at_ms = src.expires_at_ms;
      }
    }
    m.forked_from = args.forked_from;
    m.fork_offset = fork_offset;
    out.tail = fork_offset;
  }
  out.initial = args.body;
  if (!out.initial.empty() && IsJsonType(m.content_type)) {
    auto processed = ProcessJsonAppend(out.initial, /*initial_create=*/true);
    if (!processed.ok()) return refuse(Code::kInvalidJson);
    out.initial = std::move(*processed);
  }
  return out;
}

namespace {

bool Stale(const ProducerState& p, std::int64_t now_ms, const StreamLimits& limits) {
  return now_ms - p.updated_ms > limits.producer_state_ttl_ms;
}

OpResult CheckProducer(const StreamMeta& meta, const ProducerArgs& p, std::int64_t now_ms,
                       const StreamLimits& limits, std::optional<std::size_t> live_producers) {
  OpResult r;
  auto it = meta.producers.find(p.id);
  if (it != meta.producers.end() && Stale(it->second, now_ms, limits)) it = meta.producers.end();
  if (it == meta.producers.end()) {
    const auto live = live_producers.value_or(static_cast<std::size_t>(
        std::count_if(meta.producers.begin(), meta.producers.end(),
                      [&](const auto& e) { return !Stale(e.second, now_ms, limits); })));
    if (live >= limits.max_producers) {
      r.code = Code::kFull;
      return r;
    }
    if (p.seq != 0) {
      r.code = Code::kSequenceGap;
      r.expected_seq = 0;
      r.received_seq = p.seq;
    }
    return r;
  }
  const ProducerState& state = it->second;
  if (p.epoch < state.epoch) {
    r.code = Code::kStaleEpoch;
    r.current_epoch = state.epoch;
  } else if (p.epoch > state.epoch) {
    if (p.seq != 0) r.code = Code::kInvalidEpochSeq;
  } else if (p.seq <= state.last_seq) {
    r.code = Code::kDuplicate;
    r.producer_seq = state.last_seq;
  } else if (p.seq != state.last_seq + 1) {
    r.code = Code::kSequenceGap;
    r.expected_seq = state.last_seq + 1;
    r.received_seq = p.seq;
  }
  return r;
}

}  // namespace

bool NewProducer(const StreamMeta& meta, const std::string& producer, std::int64_t now_ms,
                 const StreamLimits& limits) {
  auto it = meta.producers.find(producer);
  return it == meta.producers.end() || Stale(it->second, now_ms, limits);
}

AppendPlan PlanAppend(const StreamMeta& meta, const AppendArgs& args, std::int64_t now_ms,
                      const StreamLimits& limits, std::optional<std::size_t> live_producers) {
  AppendPlan plan;
  OpResult& r = plan.result;
  const bool close_only = args.body.empty() && args.close;
  if (meta.closed && close_only && !args.producer) {
    plan.idempotent_close = true;  // closing is idempotent
    return plan;
  }
  if (meta.closed) {
    const auto& by = meta.closed_by;
    const bool closed_by_this = args.producer && by && by->producer == args.producer->id &&
                                by->epoch == args.producer->epoch && by->seq == args.producer->seq;
    r.code = closed_by_this ? Code::kDuplicate : Code::kClosed;
    if (args.producer) r.producer_seq = args.producer->seq;
    return plan;
  }
  if (!close_only && !args.content_type.empty() &&
      NormalizeContentType(args.content_type) != NormalizeContentType(meta.content_type)) {
    r.code = Code::kTypeMismatch;
    return plan;
  }
  if (args.producer) {
    r = CheckProducer(meta, *args.producer, now_ms, limits, live_producers);
    if (r.code != Code::kOk) return plan;
  }
  if (!close_only) {
    if (args.stream_seq && meta.last_stream_seq && *args.stream_seq <= *meta.last_stream_seq) {
      r.code = Code::kSeqConflict;
      return plan;
    }
    std::string data = args.body;
    if (IsJsonType(meta.content_type)) {
      auto processed = ProcessJsonAppend(data, /*initial_create=*/false);
      if (!processed.ok()) {
        r.code =
            processed.status().message() == "invalid JSON" ? Code::kInvalidJson : Code::kEmptyArray;
        return plan;
      }
      data = std::move(*processed);
    }
    plan.data = std::move(data);
  }
  plan.changes_meta = args.producer || args.stream_seq || args.close;
  return plan;
}

void ApplyAppend(StreamMeta& meta, const AppendArgs& args, std::int64_t now_ms,
                 const StreamLimits& limits) {
  std::erase_if(meta.producers,
                [&](const auto& entry) { return Stale(entry.second, now_ms, limits); });
  const bool close_only = args.body.empty() && args.close;
  if (!close_only && args.stream_seq) meta.last_stream_seq = args.stream_seq;
  if (args.producer)
    meta.producers[args.producer->id] =
        ProducerState{args.producer->epoch, args.producer->seq, now_ms};
  if (args.close) {
    meta.closed = true;
    if (args.producer)
      meta.closed_by = ClosedBy{args.producer->id, args.producer->epoch, args.producer->seq};
  }
}

bool Expired(const StreamMeta& meta, std::int64_t last_access_ms, std::int64_t now_ms) {
  if (meta.expires_at && now_ms >= meta.expires_at_ms) return true;
  return meta.ttl_seconds && now_ms >= last_access_ms + *meta.ttl_seconds * 1000;
}

StreamInfo InfoOf(const StreamMeta& meta, Offset tail) {
  return StreamInfo{meta.content_type, tail, meta.closed, meta.ttl_seconds, meta.expires_at};
}

}  // namespace agentstream::streams

// The PostgreSQL streams' write transactions (postgres_streams_internal.h): every one locks the
// rows it may change first, in path order and in one statement, reads them under the locks and
// decides with the shared rules (stream_rules.h). A removal that lets a deleted source go takes
// the source's row in the same lock statement (the chain of sources is read before, unlocked:
// a row's source never changes).
#include <algorithm>
#include <set>

#include "core/sql_int.h"
#include "streams/postgres_streams_internal.h"
#include "streams/stream_rules.h"

namespace agentstream::streams::pgs {

using pg::Conn;
using pg::Param;
using pg::Rows;

namespace {

Param Bool(bool b) { return Param(b ? "true" : "false"); }

Param OptInt(const std::optional<std::int64_t>& v) { return v ? Param(*v) : Param(); }

// "($N+1::t1,$N+2::t2,...)" for one row of VALUES.
std::string Tuple(std::size_t used, const std::vector<const char*>& types) {
  std::string out = "(";
  for (std::size_t i = 0; i < types.size(); ++i)
    out += (i > 0 ? ",$" : "$") + std::to_string(used + i + 1) + "::" + types[i];
  return out + ")";
}

Result<std::int64_t> DbNow(Conn& conn) {
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec("SELECT " + std::string(kNowMs)));
  return r.Int(0, 0);
}

// The rows at `paths` (those that exist), locked in path order, and the database's clock.
struct Locked {
  std::map<std::string, Row> by_path;
  std::int64_t now_ms = 0;
  Row* Find(const std::string& path) {
    auto it = by_path.find(path);
    return it == by_path.end() ? nullptr : &it->second;
  }
  Row* FindId(std::int64_t id) {
    for (auto& [path, row] : by_path)
      if (row.meta.id == id) return &row;
    return nullptr;
  }
};

Result<Locked> LockPaths(Conn& conn, std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  Locked locked;
  AS_ASSIGN_OR_RETURN(Rows r, conn.Exec({"SELECT " + RowColumns() +
                                             " FROM ds_streams WHERE path = ANY($1::text[]) "
                                             "ORDER BY path FOR UPDATE",
                                         {TextArray(paths)},
                                         /*reuse=*/true}));
  for (int i = 0; i < r.size(); ++i) {
    Row row = RowAt(r, i);
    locked.now_ms = row.now_ms;
    std::string path = row.meta.path;
    locked.by_path.emplace(std::move(path), std::move(row));
  }
  if (r.size() == 0) {
    AS_ASSIGN_OR_RETURN(locked.now_ms, DbNow(conn));
  }
  return locked;
}

// The paths of the stream at `path` and of the sources it reads through (unlocked).
Result<std::vector<std::string>> ChainPaths(Conn& conn, const std::string& path) {
  AS_ASSIGN_OR_RETURN(
      Rows r, conn.Exec("WITH RECURSIVE chain AS (SELECT 0 AS depth, path, forked_from_id FROM "
                        "ds_streams WHERE path = $1 UNION ALL SELECT c.depth + 1, s.path, "
                        "s.forked_from_id FROM ds_streams s JOIN chain c ON s.id = "
                        "c.forked_from_id WHERE c.depth < 10000) SELECT path FROM chain",
                        {path}));
  std::vector<std::string> paths;
  paths.reserve(static_cast<std::size_t>(r.size()));
  for (int i = 0; i < r.size(); ++i) paths.push_back(r.Text(i, 0));
  return paths;
}

// Removes `row` (its messages are purged later) and then each source that was left deleted or
// expired with no live fork, as far as the locked rows go.
Status RemoveCascade(Conn& conn, Locked& locked, const Row& row,
                     std::vector<std::string>* changed) {
  const Param id(row.meta.id);
  AS_RETURN_IF_ERROR(conn.Exec("DELETE FROM ds_streams WHERE id = $1", {id}).status());
  AS_RETURN_IF_ERROR(conn.Exec("DELETE FROM ds_producers WHERE stream_id = $1", {id}).status());
  AS_RETURN_IF_ERROR(
      conn.Exec("INSERT INTO ds_dead(stream_id) VALUES($1) ON CONFLICT DO NOTHING", {id}).status());
  changed->push_back(row.meta.path);
  if (!row.forked_from_id) return Status::Ok();
  Row* parent = locked.FindId(*row.forked_from_id);
  if (parent == nullptr || !parent->Dead()) return Status::Ok();
  AS_ASSIGN_OR_RETURN(bool forks, HasLiveForks(conn, parent->meta.id, locked.now_ms));
  if (forks) return Status::Ok();
  const Row copy = *parent;
  return RemoveCascade(conn, locked, copy, changed);
}

// The chain of `path` and `also`, locked.
Result<Locked> LockChain(Conn& conn, const std::string& path,
                         const std::vector<std::string>& also = {}) {
  AS_ASSIGN_OR_RETURN(std::vector<std::string> paths, ChainPaths(conn, path));
  paths.push_back(path);
  paths.insert(paths.end(), also.begin(), also.end());
  return LockPaths(conn, std::move(paths));
}

// Multi-row writes gathered into data-modifying CTEs of one statement, sent when the next row
// would pass the protocol's parameter limit, or at Finish with the announcement of the changes.
class Writes {
 public:
  explicit Writes(Conn& conn) : conn_(conn) {}

  // One row of the multi-row statement `head` ... `tail` (its VALUES list in between).
  Status Row(std::string_view head, std::string_view tail, const std::vector<const char*>& types,
             std::vector<Param> values) {
    if (params_.size() + values.size() > kMaxParams) {
      AS_RETURN_IF_ERROR(EndPart());
      AS_RETURN_IF_ERROR(Send("SELECT 1"));
    }
    if (part_.empty()) {
      part_.assign(head);
      tail_.assign(tail);
    } else {
      part_ += ',';
    }
    part_ += Tuple(params_.size(), types);
    for (Param& v : values) params_.push_back(std::move(v));
    return Status::Ok();
  }
  // Ends the statement the rows so far belong to.
  Status EndPart() {
    if (part_.empty()) return Status::Ok();
    parts_.push_back("w" + std::to_string(parts_.size()) + " AS (" + part_ + tail_ + ")");
    part_.clear();
    return Status::Ok();
  }
  // Sends what is left, announcing `changed` on `channel` (delivered at COMMIT).
  Status Finish(const std::string& channel, const std::vector<std::string>& changed) {
    AS_RETURN_IF_ERROR(EndPart());
    if (changed.empty()) return parts_.empty() ? Status::Ok() : Send("SELECT 1");
    const std::size_t first = params_.size();
    params_.push_back(Param(channel));
    params_.push_back(Param(TextArray(NoticePayloads(changed))));
    return Send("SELECT pg_notify($" + std::to_string(first + 1) + ", p) FROM unnest($" +
                std::to_string(first + 2) + "::text[]) AS p");
  }

 private:
  static constexpr std::size_t kMaxParams = 60000;  // the protocol allows 65,535

  Status Send(const std::string& main) {
    std::string sql;
    for (const std::string& part : parts_) sql += (sql.empty() ? "WITH " : ", ") + part;
    sql += (sql.empty() ? "" : " ") + main;
    Status sent = conn_.Exec(sql, params_).status();
    parts_.clear();
    params_.clear();
    return sent;
  }

  Conn& conn_;
  std::vector<std::string> parts_;
  std::string part_, tail_;
  std::vector<Param> params_;
};

}  // namespace

namespace {

// The producers' states the batch's appends name, read into their locked rows.
Status LoadProducers(Conn& conn, const std::vector<AppendOp>& ops, Locked& locked) {
  std::vector<std::int64_t> ids;
  std::vector<std::string> names;
  for (const AppendOp& op : ops) {
    Row* row = op.args.producer ? locked.Find(op.args.path) : nullptr;
    if (row == nullptr) continue;
    ids.push_back(row->meta.id);
    names.push_back(op.args.producer->id);
  }
  if (ids.empty()) return Status::Ok();
  AS_ASSIGN_OR_RETURN(
      Rows p, conn.Exec({"SELECT p.stream_id, p.producer, p.epoch, p.last_seq, p.updated_ms FROM "
                         "ds_producers p JOIN unnest($1::bigint[], $2::text[]) AS k(s, n) ON "
                         "p.stream_id = k.s AND p.producer = k.n",
                         {IntArray(ids), TextArray(names)},
                         /*reuse=*/true}));
  for (int i = 0; i < p.size(); ++i) {
    Row* row = locked.FindId(p.Int(i, 0));
    if (row != nullptr)
      row->meta.producers[p.Text(i, 1)] =
          ProducerState{static_cast<std::uint64_t>(p.Int(i, 2)),
                        static_cast<std::uint64_t>(p.Int(i, 3)), p.Int(i, 4)};
  }
  return Status::Ok();
}

// What a batch of appends writes, once each op was planned against its locked row.
struct AppendWrites {
  struct NewMessage {
    std::int64_t stream;
    Offset offset;
    std::string data;
  };
  std::vector<NewMessage> messages;
  std::set<std::string> dirty;  // rows to write back
  std::map<std::pair<std::int64_t, std::string>, ProducerState> producers;
};

// Plans each op against its row (in memory, under the rows' locks): its result, and what it
// writes into `writes`. `changed` receives the paths appended to.
Status PlanAppends(Conn& conn, const StreamLimits& limits, std::vector<AppendOp>& ops,
                   Locked& locked, AppendWrites& writes, std::vector<std::string>* changed) {
  const std::int64_t now = locked.now_ms;
  std::map<std::int64_t, std::size_t> live_producers;  // loaded when a new producer comes
  for (AppendOp& op : ops) {
    const AppendArgs& args = op.args;
    OpResult& r = op.result;
    Row* row = locked.Find(args.path);
    if (row == nullptr) {
      r.code = Code::kNotFound;
      continue;
    }
    if (row->Dead()) {
      AS_ASSIGN_OR_RETURN(bool forks, HasLiveForks(conn, row->meta.id, now));
      r.code = forks ? Code::kGone : Code::kNotFound;
      continue;
    }
    row->last_access_ms = std::max(row->last_access_ms, now);
    if (row->meta.ttl_seconds) writes.dirty.insert(args.path);
    std::optional<std::size_t> live;
    if (args.producer && NewProducer(row->meta, args.producer->id, now, limits)) {
      auto count = live_producers.find(row->meta.id);
      if (count == live_producers.end()) {
        AS_ASSIGN_OR_RETURN(
            Rows c, conn.Exec("SELECT count(*) FROM ds_producers WHERE stream_id = $1 AND "
                              "updated_ms >= $2",
                              {Param(row->meta.id), Param(now - limits.producer_state_ttl_ms)}));
        count = live_producers.emplace(row->meta.id, static_cast<std::size_t>(c.Int(0, 0))).first;
      }
      live = count->second;
    }
    AppendPlan plan = PlanAppend(row->meta, args, now, limits, live);
    r = plan.result;
    if (plan.idempotent_close || r.code != Code::kOk) {
      r.info = InfoOf(row->meta, row->tail);
      continue;
    }
    if (plan.data) {
      row->tail = Advance(row->tail, plan.data->size());
      writes.messages.push_back({row->meta.id, row->tail, std::move(*plan.data)});
    }
    ApplyAppend(row->meta, args, now, limits);
    if (args.producer) {
      if (live) ++live_producers[row->meta.id];
      writes.producers[{row->meta.id, args.producer->id}] = row->meta.producers[args.producer->id];
    }
    writes.dirty.insert(args.path);
    changed->push_back(args.path);
    r.code = Code::kOk;
    r.info = InfoOf(row->meta, row->tail);
    r.offset = row->tail;
  }
  return Status::Ok();
}

// Every write of the batch and its announcement in as few statements as the parameter limit
// allows (one, unless the batch is large): data-modifying CTEs, then pg_notify.
Status WriteAppends(Conn& conn, Locked& locked, AppendWrites& planned, const std::string& channel,
                    const std::vector<std::string>& changed) {
  Writes writes(conn);
  for (AppendWrites::NewMessage& m : planned.messages) {
    AS_RETURN_IF_ERROR(
        writes.Row("INSERT INTO ds_messages(stream_id, read_seq, byte_pos, data) VALUES", "",
                   {"bigint", "bigint", "bigint", "bytea"},
                   {Param(m.stream), Param(I64(m.offset.read_seq)), Param(I64(m.offset.byte_pos)),
                    Param::Bytes(std::move(m.data))}));
  }
  AS_RETURN_IF_ERROR(writes.EndPart());
  for (const std::string& path : planned.dirty) {
    const Row& row = *locked.Find(path);
    const auto& by = row.meta.closed_by;
    AS_RETURN_IF_ERROR(writes.Row(
        "UPDATE ds_streams AS s SET tail_read_seq = u.trs, tail_byte_pos = u.tbp, closed = "
        "u.closed, closed_by_producer = u.cbp, closed_by_epoch = u.cbe, closed_by_seq = u.cbs, "
        "last_stream_seq = u.lss, last_access_ms = GREATEST(s.last_access_ms, u.la) FROM "
        "(VALUES",
        ") AS u(id, trs, tbp, closed, cbp, cbe, cbs, lss, la) WHERE s.id = u.id",
        {"bigint", "bigint", "bigint", "boolean", "text", "bigint", "bigint", "text", "bigint"},
        {Param(row.meta.id), Param(I64(row.tail.read_seq)), Param(I64(row.tail.byte_pos)),
         Bool(row.meta.closed), by ? Param(by->producer) : Param(),
         by ? Param(I64(by->epoch)) : Param(), by ? Param(I64(by->seq)) : Param(),
         Param(row.meta.last_stream_seq), Param(row.last_access_ms)}));
  }
  AS_RETURN_IF_ERROR(writes.EndPart());
  for (const auto& [key, p] : planned.producers) {
    AS_RETURN_IF_ERROR(writes.Row(
        "INSERT INTO ds_producers(stream_id, producer, epoch, last_seq, updated_ms) VALUES",
        " ON CONFLICT (stream_id, producer) DO UPDATE SET epoch = excluded.epoch, last_seq = "
        "excluded.last_seq, updated_ms = excluded.updated_ms",
        {"bigint", "text", "bigint", "bigint", "bigint"},
        {Param(key.first), Param(key.second), Param(I64(p.epoch)), Param(I64(p.last_seq)),
         Param(p.updated_ms)}));
  }
  AS_RETURN_IF_ERROR(writes.EndPart());
  return writes.Finish(channel, changed);
}

}  // namespace

Status AppendBatch(Conn& conn, const StreamLimits& limits, const std::string& channel,
                   std::vector<AppendOp>& ops, std::vector<std::string>* changed) {
  std::vector<std::string> paths;
  paths.reserve(ops.size());
  for (const AppendOp& op : ops) paths.push_back(op.args.path);
  AS_ASSIGN_OR_RETURN(Locked locked, LockPaths(conn, paths));
  AS_RETURN_IF_ERROR(LoadProducers(conn, ops, locked));
  AppendWrites writes;
  AS_RETURN_IF_ERROR(PlanAppends(conn, limits, ops, locked, writes, changed));
  return WriteAppends(conn, locked, writes, channel, *changed);
}

namespace {

// Writes a planned new stream (its row and its initial messages) and answers Created.
Status InsertStream(Conn& conn, NewStream& plan, const CreateArgs& args, std::int64_t now,
                    std::optional<std::int64_t> source_id, OpResult* out,
                    std::vector<std::string>* changed) {
  StreamMeta& m = plan.meta;
  m.created_ms = now;
  m.closed = args.closed;
  std::vector<std::pair<Offset, std::string>> initial;
  Offset tail = plan.tail;
  for (std::string* data : {&plan.prefix, &plan.initial}) {
    if (data->empty()) continue;
    tail = Advance(tail, data->size());
    initial.emplace_back(tail, std::move(*data));
  }
  AS_ASSIGN_OR_RETURN(
      Rows inserted,
      conn.Exec("INSERT INTO ds_streams(path, content_type, ttl_seconds, expires_at, "
                "expires_at_ms, created_ms, last_access_ms, closed, forked_from, forked_from_id, "
                "fork_read_seq, fork_byte_pos, fork_sub_offset, soft_deleted, tail_read_seq, "
                "tail_byte_pos) VALUES($1,$2,$3,$4,$5,$6,$6,$7,$8,$9,$10,$11,$12,false,$13,$14) "
                "ON CONFLICT (path) DO NOTHING RETURNING id",
                {m.path, m.content_type, OptInt(m.ttl_seconds), Param(m.expires_at),
                 m.expires_at ? Param(m.expires_at_ms) : Param(), Param(now), Bool(m.closed),
                 Param(m.forked_from), OptInt(source_id), Param(I64(m.fork_offset.read_seq)),
                 Param(I64(m.fork_offset.byte_pos)), Param(I64(m.fork_sub_offset)),
                 Param(I64(tail.read_seq)), Param(I64(tail.byte_pos))}));
  if (inserted.size() == 0)
    return Error(ErrorCode::kConflict, "another daemon created " + args.path + " meanwhile");
  const std::int64_t id = inserted.Int(0, 0);
  for (auto& [offset, data] : initial) {
    AS_RETURN_IF_ERROR(conn.Exec("INSERT INTO ds_messages(stream_id, read_seq, byte_pos, data) "
                                 "VALUES($1,$2,$3,$4)",
                                 {Param(id), Param(I64(offset.read_seq)),
                                  Param(I64(offset.byte_pos)), Param::Bytes(std::move(data))})
                           .status());
  }
  changed->push_back(args.path);
  out->code = Code::kCreated;
  out->info = InfoOf(m, tail);
  out->offset = tail;
  return Status::Ok();
}

}  // namespace

Status CreateStream(Conn& conn, const StreamLimits& limits, const CreateArgs& args, OpResult* out,
                    std::vector<std::string>* changed) {
  std::vector<std::string> also;
  if (args.forked_from) also.push_back(*args.forked_from);
  AS_ASSIGN_OR_RETURN(Locked locked, LockChain(conn, args.path, also));
  const std::int64_t now = locked.now_ms;
  if (ExpiresBeforeCreation(args, now)) {
    out->code = Code::kExpiresInPast;
    return Status::Ok();
  }
  if (Row* existing = locked.Find(args.path)) {
    if (!existing->Dead()) {
      out->code = SameConfig(args, existing->meta) ? Code::kOk : Code::kConfigConflict;
      out->info = InfoOf(existing->meta, existing->tail);
      return Status::Ok();
    }
    AS_ASSIGN_OR_RETURN(bool forks, HasLiveForks(conn, existing->meta.id, now));
    if (forks) {
      out->code = Code::kHasForks;
      return Status::Ok();
    }
    const Row copy = *existing;
    AS_RETURN_IF_ERROR(RemoveCascade(conn, locked, copy, changed));
  }
  AS_ASSIGN_OR_RETURN(Rows count, conn.Exec("SELECT count(*) FROM ds_streams"));
  if (static_cast<std::size_t>(count.Int(0, 0)) >= limits.max_streams) {
    out->code = Code::kFull;
    return Status::Ok();
  }
  std::optional<ForkSource> fork;
  Status read_failed;
  std::optional<std::int64_t> source_id;
  if (args.forked_from) {
    Row* source = locked.Find(*args.forked_from);
    if (source == nullptr) {
      out->code = Code::kSourceNotFound;
      return Status::Ok();
    }
    if (source->Dead()) {
      bool forks = false;
      if (source->meta.soft_deleted) {
        AS_ASSIGN_OR_RETURN(forks, HasLiveForks(conn, source->meta.id, now));
      }
      out->code = forks ? Code::kSourceGone : Code::kSourceNotFound;
      return Status::Ok();
    }
    source_id = source->meta.id;
    fork = ForkSource{&source->meta, source->tail, [&, source](Offset offset) {
                        Result<std::vector<Row>> chain = Chain(conn, source->meta.path);
                        ReadResult first;
                        Status read = chain.ok() ? ReadMessages(conn, *chain, offset, source->tail,
                                                                1, 1, &first)
                                                 : chain.status();
                        if (!read.ok()) read_failed = read;
                        if (first.messages.empty()) return std::optional<std::string>();
                        return std::optional<std::string>(*first.messages.front().data);
                      }};
  }
  NewStream plan = PlanCreate(args, fork ? &*fork : nullptr);
  AS_RETURN_IF_ERROR(read_failed);
  if (plan.code != Code::kCreated) {
    out->code = plan.code;
    return Status::Ok();
  }
  return InsertStream(conn, plan, args, now, source_id, out, changed);
}

Status DeleteStream(Conn& conn, const std::string& path, OpResult* out,
                    std::vector<std::string>* changed) {
  AS_ASSIGN_OR_RETURN(Locked locked, LockChain(conn, path));
  Row* row = locked.Find(path);
  if (row == nullptr) {
    out->code = Code::kNotFound;
    return Status::Ok();
  }
  AS_ASSIGN_OR_RETURN(bool forks, HasLiveForks(conn, row->meta.id, locked.now_ms));
  const Row copy = *row;
  if (row->Dead()) {
    out->code = forks ? Code::kGone : Code::kNotFound;
    return forks ? Status::Ok() : RemoveCascade(conn, locked, copy, changed);
  }
  out->code = Code::kOk;
  if (!forks) return RemoveCascade(conn, locked, copy, changed);
  AS_RETURN_IF_ERROR(
      conn.Exec("UPDATE ds_streams SET soft_deleted = true WHERE id = $1", {Param(row->meta.id)})
          .status());
  changed->push_back(path);
  return Status::Ok();
}

Status RemoveIfDead(Conn& conn, const std::string& path, std::vector<std::string>* changed) {
  AS_ASSIGN_OR_RETURN(Locked locked, LockChain(conn, path));
  Row* row = locked.Find(path);
  if (row == nullptr || !row->Dead()) return Status::Ok();
  AS_ASSIGN_OR_RETURN(bool forks, HasLiveForks(conn, row->meta.id, locked.now_ms));
  if (forks) return Status::Ok();
  const Row copy = *row;
  return RemoveCascade(conn, locked, copy, changed);
}

}  // namespace agentstream::streams::pgs

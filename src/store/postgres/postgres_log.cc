// The PostgreSQL log's lifecycle and its writer's commit path: opening the schema and the
// connections, appends, the batch transaction, and a COMMIT whose answer was lost looked up
// before the batch is acknowledged or failed (postgres_log.h).
#include "store/postgres/postgres_log.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "log/log.h"
#include "pg/commit_outcome.h"
#include "pg/pg.h"
#include "pg/replication.h"
#include "pg/setup.h"
#include "store/commit_listeners.h"
#include "store/commit_queue.h"
#include "store/log_state.h"
#include "store/postgres/postgres_commit_channel.h"
#include "store/postgres/postgres_log_impl.h"
#include "store/postgres/postgres_schema.h"
#include "store/postgres/sql.h"
#include "store/postgres/txn.h"
#include "system/random_id.h"

namespace agentstream {
namespace pg {

Result<Conn> Connect(const PostgresLogOptions& options, bool writer) {
  // Names the daemon's connections in pg_stat_activity ("agentstream" or "agentstream:SCHEMA").
  AS_ASSIGN_OR_RETURN(Conn conn, pg::ConnectTo(options.conninfo, "agentstream", options.schema));
  if (writer && options.durability == Durability::kOs)
    AS_RETURN_IF_ERROR(conn.ExecScript("SET synchronous_commit TO off"));
  // Record batches above the TOAST threshold are compressed with lz4 where the server has it:
  // several times cheaper than the default pglz, which took 8% of the server's time under load
  // (docs/benchmarks.md). A server built without lz4 refuses the setting and keeps pglz; the
  // reads do not care which (each value names its method).
  if (writer) (void)conn.ExecScript("SET default_toast_compression TO lz4");
  if (writer)
    AS_RETURN_IF_ERROR(pg::EndTransactionsIdleFor(conn, options.writer_idle_in_transaction));
  return conn;
}

Result<Conn> Listen(const PostgresLogOptions& options) {
  AS_ASSIGN_OR_RETURN(Conn conn, Connect(options, false));
  AS_RETURN_IF_ERROR(
      conn.ExecScript("LISTEN " + QuoteIdentifier(pg::CommitChannel(options.schema))));
  return conn;
}

namespace {

// Each writer queues its share of the requests the options allow.
WriteQueue::Options WriterQueueOptions(const PostgresLogOptions& options, const void* log) {
  const std::size_t writers = std::max<std::size_t>(options.writer_connections, 1);
  return WriteQueue::Options{
      .max_queued = std::max<std::size_t>(options.max_queued_requests / writers, 1),
      .max_batch = options.max_batch_requests,
      .family = log};
}

}  // namespace

PostgresEventLog::PostgresEventLog(PostgresLogOptions options,
                                   std::vector<WriterConnection> writers, Conn listening)
    : options_(std::move(options)), writers_([&] {
        std::vector<std::unique_ptr<Writer>> made;
        made.reserve(writers.size());
        for (WriterConnection& connection : writers) {
          made.push_back(
              std::make_unique<Writer>(std::move(connection), WriterQueueOptions(options_, this)));
        }
        return made;
      }()) {
  for (const auto& w : writers_)
    w->queue.Start([this, &writer = *w](std::vector<Op>& batch) { RunBatch(writer, batch); });
  hearing_ = pg::HearCommits(
      std::move(listening), [this] { return Listen(options_); },
      [this](int pid) {
        return std::any_of(writers_.begin(), writers_.end(),
                           [pid](const auto& w) { return w->pid.load() == pid; });
      },
      listeners_);
}

PostgresEventLog::~PostgresEventLog() {
  for (const auto& w : writers_) w->queue.Stop();
  hearing_.reset();
  for (const auto& w : writers_)
    if (!w->conn.Broken()) w->stamps.Forget(w->conn);
}

PostgresEventLog::Writer& PostgresEventLog::Claim(const SessionId& session) {
  std::lock_guard lock(routes_mu_);
  auto [route, fresh] = routes_.try_emplace(session.str());
  if (fresh) {
    std::size_t fewest = std::numeric_limits<std::size_t>::max();
    for (std::size_t i = 0; i < writers_.size(); ++i) {
      const std::size_t queued = writers_[i]->queue.queued();
      if (queued < kSpillQueued) {
        route->second.writer = i;
        break;
      }
      if (queued < fewest) {
        fewest = queued;
        route->second.writer = i;
      }
    }
  }
  ++route->second.pending;
  return *writers_[route->second.writer];
}

void PostgresEventLog::Release(const SessionId& session) {
  std::lock_guard lock(routes_mu_);
  auto route = routes_.find(session.str());
  if (route != routes_.end() && --route->second.pending == 0) routes_.erase(route);
}

void PostgresEventLog::AppendAsync(AppendRequest request, AppendCallback done) {
  Status checked = store_internal::CheckBatch(request.events, options_.limits, false);
  if (checked.ok()) {
    checked = CheckText({{"a session id", request.session.str()},
                         {"a producer id", request.producer ? request.producer->id.str() : ""}});
  }
  if (!checked.ok()) return done(checked);
  if (writers_.size() == 1) {  // nothing to route
    writers_.front()->queue.Enqueue(PendingAppend{std::move(request), std::move(done)});
    return;
  }
  Writer& w = Claim(request.session);
  // Released once its commit is told (or it failed): its notices went out before it completes.
  AppendCallback released = [this, session = request.session,
                             done = std::move(done)](Result<AppendResult> result) {
    Release(session);
    done(std::move(result));
  };
  w.queue.Enqueue(PendingAppend{std::move(request), std::move(released)});
}

ListenerRegistration PostgresEventLog::SubscribeCommits(CommitListener listener) {
  return listeners_->Add(std::move(listener));
}

Status PostgresEventLog::Health() {
  for (const auto& w : writers_) {
    if (w->unresolved.load() != 0)
      return Error(ErrorCode::kUnavailable, "the outcome of a commit is not known yet");
    AS_RETURN_IF_ERROR(w->queue.Writable());
  }
  return Status::Ok();
}

LogStats PostgresEventLog::Stats() {
  LogStats total;
  for (const auto& w : writers_) {
    const LogStats s = w->queue.stats();
    total.commits += s.commits;
    total.appends += s.appends;
    total.events += s.events;
    total.commit_micros += s.commit_micros;
    total.sync_micros += s.sync_micros;
  }
  return total;
}

Status PostgresEventLog::ApplyAppend(Txn& t, const AppendRequest& request, AppendResult& result) {
  AS_ASSIGN_OR_RETURN(Txn::Session * s, t.Load(request.session));
  AS_ASSIGN_OR_RETURN(AppendPlan plan, store_internal::PlanAppend(s->state, request));
  result = plan.result;
  if (plan.result.duplicate) return Status::Ok();
  t.InsertEvents(s->key, plan.result.epoch, plan.result.first_seq, request.events,
                 request.owner_generation.value_or(0));
  t.StoreProducer(s->key, plan);
  if (plan.meta) AS_RETURN_IF_ERROR(t.StoreMeta(*s, *plan.meta));
  store_internal::ApplyAppend(s->state, plan);
  t.Touch(request.session, plan.result.epoch, plan.result.last_seq);
  return Status::Ok();
}

void PostgresEventLog::FailAll(std::vector<Op>& batch, const Status& status) {
  for (Op& op : batch) Queue::Complete(op, status);
}

bool PostgresEventLog::WriterReady(Writer& w, std::vector<Op>& batch) {
  // A connection the server ended while this writer was idle is reopened before the batch rather
  // than failing it: after a failover, a writer that had nothing to do still holds one.
  if (w.conn.UsableAfterIdle()) return true;
  Result<Conn> reopened = Connect(options_, true);
  if (!reopened.ok()) {
    FailAll(batch, reopened.status());
    return false;
  }
  w.conn = std::move(*reopened);
  w.pid = w.conn.BackendPid();
  return true;
}

bool PostgresEventLog::EarlierOutcomeKnown(Writer& w, std::vector<Op>& batch) {
  if (w.unresolved == 0) return true;
  Result<bool> landed = pg::ResolveOutcome(
      w.stamps, w.unresolved.load(), w.conn, [this] { return Connect(options_, true); },
      std::chrono::steady_clock::duration::zero(), [] { return false; });
  w.pid = w.conn.BackendPid();
  if (!landed.ok()) {
    FailAll(batch, Error(ErrorCode::kUnavailable,
                         "the log takes no writes while an earlier commit's outcome is "
                         "unknown: " +
                             landed.status().message()));
    return false;
  }
  w.unresolved = 0;
  return true;
}

void PostgresEventLog::RunBatch(Writer& w, std::vector<Op>& batch) {
  if (!EarlierOutcomeKnown(w, batch) || !WriterReady(w, batch)) return;
  const auto started = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    Txn t(w.conn);
    std::vector<Status> outcomes(batch.size());
    std::vector<AppendResult> results(batch.size());
    std::vector<std::string> appended;
    for (const Op& op : batch)
      if (const auto* a = std::get_if<PendingAppend>(&op))
        appended.push_back(a->request.session.str());
    (void)t.Begin(std::move(appended));
    for (std::size_t i = 0; i < batch.size() && t.io().ok(); ++i) {
      if (auto* a = std::get_if<PendingAppend>(&batch[i]))
        outcomes[i] = ApplyAppend(t, a->request, results[i]);
      else
        outcomes[i] = std::get<PendingControl>(batch[i]).run(t);
    }
    Status rolled_back;
    if (!t.io().ok()) {
      (void)w.conn.ExecScript("ROLLBACK");
      rolled_back =
          Status(t.io().code(),
                 "PostgreSQL rolled the commit back, nothing was written: " + t.io().ToString());
    } else {
      Result<bool> landed = Commit(w, batch, t);
      if (landed.ok() && !*landed) return;  // Commit failed the batch
      if (landed.ok()) {
        w.queue.CountCommit(std::chrono::steady_clock::now() - started);
        w.queue.CountAcknowledged(batch, outcomes, results);
        // Listeners hear of a commit before any of its appends is acknowledged.
        const auto records = Queue::TakeRecords(batch, outcomes, results, t.now());
        for (const auto& [id, touched] : t.touched()) {
          listeners_->Notify(
              CommitNotice{SessionId(id), touched.epoch, touched.after,
                           Queue::RecordsEndingAt(records, id, touched.epoch, touched.after)});
        }
        return Queue::Acknowledge(batch, outcomes, results);
      }
      rolled_back = landed.status();
    }
    // The ops take their locks in their order, so two writers' batches (of this daemon or of
    // another) can deadlock; the server then aborts one (kConflict, pg.h). Nothing of it was
    // written: it runs again.
    if (rolled_back.code() == ErrorCode::kConflict && attempt < kAbortedBatchRetries &&
        !w.conn.Broken()) {
      log::Info("store.batch_retried", {{"ops", batch.size()}, {"error", rolled_back.message()}});
      continue;
    }
    return FailAll(batch, Error(ErrorCode::kUnavailable, rolled_back.message()));
  }
}

Result<bool> PostgresEventLog::Commit(Writer& w, std::vector<Op>& batch, Txn& t) {
  std::vector<pg::Statement> statements = t.Writes();
  if (auto announce = pg::CommitAnnouncement(t, pg::CommitChannel(options_.schema)))
    statements.push_back(std::move(*announce));
  statements.push_back(w.stamps.Stamp());
  const std::int64_t stamp = w.stamps.last();
  statements.push_back(pg::Statement{"COMMIT", {}});
  const std::vector<Result<pg::Rows>> answers = w.conn.ExecPipeline(statements);
  const Result<pg::Rows>* failed = pg::FirstFailure(answers);
  if (failed == nullptr) return true;
  const Status& why = failed->status();
  if (why.code() != ErrorCode::kUnavailable) {
    (void)w.conn.ExecScript("ROLLBACK");
    const bool at_commit = failed == &answers.back();
    return Status(why.code(),
                  (at_commit ? "PostgreSQL refused the commit, nothing was written: "
                             : "PostgreSQL rolled the commit back, nothing was written: ") +
                      why.ToString());
  }
  // The connection broke with COMMIT sent: whether it ran is told by the stamp.
  Result<bool> landed = pg::ResolveOutcome(
      w.stamps, stamp, w.conn, [this] { return Connect(options_, true); }, options_.outcome_wait,
      [&w] { return w.queue.Writable().ok(); });
  w.pid = w.conn.BackendPid();
  if (landed.ok() && *landed) return true;
  if (landed.ok()) {
    FailAll(batch, Error(ErrorCode::kUnavailable,
                         "the connection to PostgreSQL was lost during COMMIT and the commit "
                         "did not land, nothing was written: " +
                             why.ToString()));
    return false;
  }
  w.unresolved = stamp;  // later batches ask again first
  FailAll(batch, Error(ErrorCode::kIoError, "commit failed, outcome unknown: " + why.ToString() +
                                                "; " + landed.status().message()));
  return false;
}

namespace {

// Says once, at open, what the server promises on failover (pg/replication.h): a warning when an
// acknowledged append could be lost or commits would wait, else an info line. A server that
// does not let this role read it is not an error.
void LogReplication(Conn& conn, Durability durability) {
  Result<pg::ReplicationState> state = pg::ReadReplication(conn);
  if (!state.ok()) {
    log::Info("store.replication_unknown", {{"error", state.status().message()}});
    return;
  }
  if (durability == Durability::kOs) state->synchronous_commit = "off";  // the writer's setting
  const pg::ReplicationVerdict verdict = pg::JudgeReplication(*state);
  const log::Level level =
      verdict.level == pg::ReplicationVerdict::Level::kWarn ? log::Level::kWarn : log::Level::kInfo;
  log::Write(level, "store.replication",
             {{"setup", verdict.setup},
              {"synchronous_commit", state->synchronous_commit},
              {"synchronous_standby_names", state->synchronous_standby_names},
              {"standbys", static_cast<std::int64_t>(state->standbys.size())},
              {"message", verdict.message}});
}

}  // namespace

}  // namespace pg

Result<std::unique_ptr<EventLog>> OpenPostgresEventLog(PostgresLogOptions options) {
  if (options.conninfo.empty())
    return Error(ErrorCode::kInvalidArgument, "the PostgreSQL log needs a connection string");
  AS_ASSIGN_OR_RETURN(pg::Conn setup, pg::Conn::Open(options.conninfo));
  AS_RETURN_IF_ERROR(pg::EnsureSchema(setup, options.schema, PostgresLogSchema()));
  pg::LogReplication(setup, options.durability);
  if (options.writer_connections < 1 || options.writer_connections > kMaxWriterConnections) {
    return Error(ErrorCode::kInvalidArgument, "the PostgreSQL log takes 1 to " +
                                                  std::to_string(kMaxWriterConnections) +
                                                  " writer connections");
  }
  std::vector<pg::PostgresEventLog::WriterConnection> writers;
  for (std::size_t i = 0; i < options.writer_connections; ++i) {
    AS_ASSIGN_OR_RETURN(pg::Conn conn, pg::Connect(options, true));
    pg::CommitStamps stamps("commit_stamps", system::RandomId("writer", 32));
    AS_RETURN_IF_ERROR(stamps.Register(conn));
    writers.push_back({std::move(conn), std::move(stamps)});
  }
  AS_ASSIGN_OR_RETURN(pg::Conn listening, pg::Listen(options));
  return std::unique_ptr<EventLog>(std::make_unique<pg::PostgresEventLog>(
      std::move(options), std::move(writers), std::move(listening)));
}

}  // namespace agentstream

// The PostgreSQL log's lifecycle and its writer's commit path: opening the schema and the
// connections, appends, the batch transaction, and a COMMIT whose answer was lost looked up
// before the batch is acknowledged or failed (postgres_log.h).
#include "store/postgres/postgres_log.h"

#include <atomic>
#include <chrono>
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
  return conn;
}

Result<Conn> Listen(const PostgresLogOptions& options) {
  AS_ASSIGN_OR_RETURN(Conn conn, Connect(options, false));
  AS_RETURN_IF_ERROR(
      conn.ExecScript("LISTEN " + QuoteIdentifier(pg::CommitChannel(options.schema))));
  return conn;
}

PostgresEventLog::PostgresEventLog(PostgresLogOptions options, Conn writer, Conn listening,
                                   pg::CommitStamps stamps)
    : options_(std::move(options)),
      writer_conn_(std::move(writer)),
      stamps_(std::move(stamps)),
      queue_(Queue::Options{options_.max_queued_requests, options_.max_batch_requests}) {
  writer_pid_ = writer_conn_.BackendPid();
  queue_.Start([this](std::vector<Op>& batch) { RunBatch(batch); });
  hearing_ = pg::HearCommits(
      std::move(listening), [this] { return Listen(options_); },
      [this] { return writer_pid_.load(); }, listeners_);
}

PostgresEventLog::~PostgresEventLog() {
  queue_.Stop();
  hearing_.reset();
  if (!writer_conn_.Broken()) stamps_.Forget(writer_conn_);
}

void PostgresEventLog::AppendAsync(AppendRequest request, AppendCallback done) {
  Status checked = store_internal::CheckBatch(request.events, options_.limits, false);
  if (checked.ok()) {
    checked = CheckText({{"a session id", request.session.str()},
                         {"a producer id", request.producer ? request.producer->id.str() : ""}});
  }
  if (!checked.ok()) return done(checked);
  queue_.Enqueue(PendingAppend{std::move(request), std::move(done)});
}

ListenerRegistration PostgresEventLog::SubscribeCommits(CommitListener listener) {
  return listeners_->Add(std::move(listener));
}

Status PostgresEventLog::Health() {
  if (unresolved_.load() != 0)
    return Error(ErrorCode::kUnavailable, "the outcome of a commit is not known yet");
  return queue_.Writable();
}

LogStats PostgresEventLog::Stats() { return queue_.stats(); }

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

bool PostgresEventLog::WriterReady(std::vector<Op>& batch) {
  if (!writer_conn_.Broken()) return true;
  Result<Conn> reopened = Connect(options_, true);
  if (!reopened.ok()) {
    FailAll(batch, reopened.status());
    return false;
  }
  writer_conn_ = std::move(*reopened);
  writer_pid_ = writer_conn_.BackendPid();
  return true;
}

bool PostgresEventLog::EarlierOutcomeKnown(std::vector<Op>& batch) {
  if (unresolved_ == 0) return true;
  Result<bool> landed = pg::ResolveOutcome(
      stamps_, unresolved_.load(), writer_conn_, [this] { return Connect(options_, true); },
      std::chrono::steady_clock::duration::zero(), [] { return false; });
  writer_pid_ = writer_conn_.BackendPid();
  if (!landed.ok()) {
    FailAll(batch, Error(ErrorCode::kUnavailable,
                         "the log takes no writes while an earlier commit's outcome is "
                         "unknown: " +
                             landed.status().message()));
    return false;
  }
  unresolved_ = 0;
  return true;
}

void PostgresEventLog::RunBatch(std::vector<Op>& batch) {
  if (!EarlierOutcomeKnown(batch) || !WriterReady(batch)) return;
  const auto started = std::chrono::steady_clock::now();
  for (int attempt = 0;; ++attempt) {
    Txn t(writer_conn_);
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
      (void)writer_conn_.ExecScript("ROLLBACK");
      rolled_back =
          Status(t.io().code(),
                 "PostgreSQL rolled the commit back, nothing was written: " + t.io().ToString());
    } else {
      Result<bool> landed = Commit(batch, t);
      if (landed.ok() && !*landed) return;  // Commit failed the batch
      if (landed.ok()) {
        queue_.CountCommit(std::chrono::steady_clock::now() - started);
        queue_.CountAcknowledged(batch, outcomes, results);
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
    // The ops take their locks in their order, so two daemons' batches can deadlock; the server
    // then aborts one (kConflict, pg.h). Nothing of it was written: it runs again.
    if (rolled_back.code() == ErrorCode::kConflict && attempt < kAbortedBatchRetries &&
        !writer_conn_.Broken()) {
      log::Info("store.batch_retried", {{"ops", batch.size()}, {"error", rolled_back.message()}});
      continue;
    }
    return FailAll(batch, Error(ErrorCode::kUnavailable, rolled_back.message()));
  }
}

Result<bool> PostgresEventLog::Commit(std::vector<Op>& batch, Txn& t) {
  std::vector<pg::Statement> statements = t.Writes();
  if (auto announce = pg::CommitAnnouncement(t, pg::CommitChannel(options_.schema)))
    statements.push_back(std::move(*announce));
  statements.push_back(stamps_.Stamp());
  const std::int64_t stamp = stamps_.last();
  statements.push_back(pg::Statement{"COMMIT", {}});
  const std::vector<Result<pg::Rows>> answers = writer_conn_.ExecPipeline(statements);
  const Result<pg::Rows>* failed = pg::FirstFailure(answers);
  if (failed == nullptr) return true;
  const Status& why = failed->status();
  if (why.code() != ErrorCode::kUnavailable) {
    (void)writer_conn_.ExecScript("ROLLBACK");
    const bool at_commit = failed == &answers.back();
    return Status(why.code(),
                  (at_commit ? "PostgreSQL refused the commit, nothing was written: "
                             : "PostgreSQL rolled the commit back, nothing was written: ") +
                      why.ToString());
  }
  // The connection broke with COMMIT sent: whether it ran is told by the stamp.
  Result<bool> landed = pg::ResolveOutcome(
      stamps_, stamp, writer_conn_, [this] { return Connect(options_, true); },
      options_.outcome_wait, [this] { return queue_.Writable().ok(); });
  writer_pid_ = writer_conn_.BackendPid();
  if (landed.ok() && *landed) return true;
  if (landed.ok()) {
    FailAll(batch, Error(ErrorCode::kUnavailable,
                         "the connection to PostgreSQL was lost during COMMIT and the commit "
                         "did not land, nothing was written: " +
                             why.ToString()));
    return false;
  }
  unresolved_ = stamp;  // later batches ask again first
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
  AS_ASSIGN_OR_RETURN(pg::Conn writer, pg::Connect(options, true));
  AS_ASSIGN_OR_RETURN(pg::Conn listening, pg::Listen(options));
  pg::CommitStamps stamps("commit_stamps", system::RandomId("writer", 32));
  AS_RETURN_IF_ERROR(stamps.Register(writer));
  return std::unique_ptr<EventLog>(std::make_unique<pg::PostgresEventLog>(
      std::move(options), std::move(writer), std::move(listening), std::move(stamps)));
}

}  // namespace agentstream

// Importing CLI transcripts (transcript_import.h): where each batch goes in the log.
#include <boost/json.hpp>

#include "runtime/manager_impl.h"

namespace agentstream::runtime {

namespace json = boost::json;

std::string_view ImportOutcomeName(ImportReply::Outcome outcome) {
  switch (outcome) {
    case ImportReply::Outcome::kCreated:
      return "created";
    case ImportReply::Outcome::kAppended:
      return "appended";
    case ImportReply::Outcome::kUnchanged:
      return "unchanged";
    case ImportReply::Outcome::kContinued:
      return "continued";
  }
  return "unchanged";
}

SessionId ImportedSessionId(ImportSource source, const std::string& cli_session_id) {
  return SessionIdForRequest("import:" + std::string(ImportSourceName(source)) + ":" +
                             cli_session_id);
}

struct AgentManager::Impl::ImportJob {
  ImportSource source = ImportSource::kClaude;
  TranscriptFile file;
  SessionId id;
  Callback<ImportReply> done;
  ImportReply reply;
  bool exists = false;  // the session is in the log
  Epoch epoch;
  Seq tail;                  // the log's tail as this import last saw it
  std::uint64_t offset = 0;  // the file's bytes imported so far
  turn::TurnState state;
};

namespace {

json::object SkippedJson(const std::map<std::string, std::size_t>& skipped) {
  json::object out;
  for (const auto& [type, count] : skipped) out[type] = count;
  return out;
}

turn::SessionStatus StatusAfterImport(const turn::TurnState& state) {
  return state.errored ? turn::SessionStatus::kError : turn::SessionStatus::kIdle;
}

}  // namespace

void AgentManager::Impl::Import(ImportSource source, TranscriptFile file,
                                const Callback<ImportReply>& done) {
  if (shut_down_) return done(Error(ErrorCode::kUnavailable, "the daemon is stopping"));
  auto job = std::make_shared<ImportJob>();
  job->source = source;
  job->id = ImportedSessionId(source, file.session_id);
  job->file = std::move(file);
  job->done = done;
  job->reply.bytes = job->file.bytes;
  job->state.provider = std::string(ImportSourceName(source));
  Result<SessionInfo> info = log_.GetSession(job->id);
  if (!info.ok() && info.status().code() != ErrorCode::kNotFound) return done(info.status());
  if (!info.ok()) {
    job->reply.outcome = ImportReply::Outcome::kCreated;
    return ImportBatch(job);
  }
  job->exists = true;
  job->epoch = info->epoch;
  job->tail = info->tail;
  const auto answer = [&](ImportReply::Outcome outcome) {
    Result<api::AgentSnapshot> snapshot = Get(job->id);
    if (!snapshot.ok()) return done(snapshot.status());
    job->reply.agent = std::move(*snapshot);
    job->reply.outcome = outcome;
    done(std::move(job->reply));
  };
  Result<LastImported> last = LastImport(log_, *info);
  if (!last.ok()) return done(last.status());
  if (last->marker) job->reply.imported_bytes = static_cast<std::uint64_t>(last->marker->offset);
  if (Live(job->id) || last->continued) return answer(ImportReply::Outcome::kContinued);
  job->offset = static_cast<std::uint64_t>(last->marker->offset);
  job->reply.imported_bytes = job->offset;
  if (job->offset >= job->file.bytes) return answer(ImportReply::Outcome::kUnchanged);
  Result<HistoryFold> history =
      LoadHistory(log_, job->id, info->epoch, Seq(0), job->state.provider);
  if (!history.ok()) return done(history.status());
  job->state = std::move(history->turns).Finish();
  job->reply.outcome = ImportReply::Outcome::kAppended;
  ImportBatch(job);
}

void AgentManager::Impl::ImportBatch(const std::shared_ptr<ImportJob>& job) {
  const auto fail = [&](const Status& s) { job->done(s); };
  if (shut_down_) return fail(Error(ErrorCode::kUnavailable, "the daemon is stopping"));
  Result<TranscriptBatch> batch = ReadTranscriptBatch(job->source, job->file.path, job->offset);
  if (!batch.ok()) return fail(batch.status());
  const bool progressed = batch->end > job->offset;
  if (progressed) {
    std::vector<NewEvent> events = ReplayTranscript(job->state, batch->events, turn_ids_);
    const std::size_t replayed = events.size();
    const std::string source(ImportSourceName(job->source));
    events.push_back(MakeNewEvent(SessionImported{
        source, job->file.path, job->file.session_id, static_cast<std::int64_t>(batch->end),
        static_cast<std::int64_t>(batch->lines), static_cast<std::int64_t>(batch->malformed),
        SkippedJson(batch->skipped)}));
    const bool created_now = !job->exists;
    Status stored = created_now ? CreateImported(*job, *batch, std::move(events))
                                : AppendImported(*job, std::move(events));
    if (!stored.ok()) return fail(stored);
    job->offset = batch->end;
    job->reply.events += replayed + (created_now ? 2 : 1);  // session.imported, session.created
    job->reply.lines += batch->lines;
    job->reply.malformed += batch->malformed;
    for (const auto& [type, count] : batch->skipped) job->reply.skipped[type] += count;
    job->reply.imported_bytes = job->offset;
  }
  if (progressed && !batch->at_end) {
    // More lines follow: the next batch runs after what else waits on the loop.
    return Run([job](Impl& impl) { impl.ImportBatch(job); });
  }
  Result<api::AgentSnapshot> snapshot = Get(job->id);
  if (!snapshot.ok()) {
    // A transcript with no complete line yet: nothing was imported.
    return fail(Error(ErrorCode::kInvalidArgument, job->file.path + " holds no complete line yet"));
  }
  job->reply.agent = std::move(*snapshot);
  if (job->reply.outcome == ImportReply::Outcome::kAppended && job->reply.events == 0)
    job->reply.outcome = ImportReply::Outcome::kUnchanged;
  Notify(job->reply.outcome == ImportReply::Outcome::kCreated ? AgentNotice::Kind::kCreated
                                                              : AgentNotice::Kind::kStatus,
         job->reply.agent, "");
  job->done(std::move(job->reply));
}

Status AgentManager::Impl::CreateImported(ImportJob& job, const TranscriptBatch& batch,
                                          std::vector<NewEvent> events) {
  if (batch.cwd.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 "no record of " + job.file.path + " names its working directory");
  }
  const std::string source(ImportSourceName(job.source));
  std::string first_prompt;
  for (const turn::ProviderEvent& e : batch.events) {
    const auto* echo = std::get_if<turn::ProviderUserEcho>(&e);
    // A slash command ("/model") names no conversation.
    if (echo != nullptr && !echo->text.empty() && echo->text[0] != '/') {
      first_prompt = echo->text;
      break;
    }
  }
  const std::string title = TitleFromPrompt(first_prompt);
  StatusRecord record;
  record.status = StatusAfterImport(job.state);
  record.imported = source;
  SessionMeta meta;
  meta.provider = source;
  meta.cwd = batch.cwd;
  meta.title = title;
  meta.persistence_handle =
      EncodeHandle(providers::PersistenceHandle{source, job.file.session_id, batch.cwd});
  meta.status_snapshot = EncodeStatusRecord(record);
  std::vector<NewEvent> initial{MakeNewEvent(
      SessionCreated{source, batch.cwd, title.empty() ? std::nullopt : std::optional(title),
                     std::nullopt, std::nullopt})};
  for (NewEvent& e : events) initial.push_back(std::move(e));
  Result<AppendResult> created = log_.CreateSession(job.id, std::move(meta), std::move(initial));
  if (!created.ok() && created.status().code() == ErrorCode::kAlreadyExists) {
    return Error(ErrorCode::kConflict,
                 job.file.path + " is being imported by another request; import again");
  }
  if (!created.ok()) return created.status();
  job.exists = true;
  job.epoch = created->epoch;
  job.tail = created->last_seq;
  return Status::Ok();
}

Status AgentManager::Impl::AppendImported(ImportJob& job, std::vector<NewEvent> events) {
  if (Live(job.id)) {
    return Error(ErrorCode::kConflict, "agent " + job.id.str() + " started while importing " +
                                           job.file.path + "; the rest is not imported");
  }
  AS_ASSIGN_OR_RETURN(OwnerGrant grant, Acquire(job.id));
  const std::uint64_t generation = grant.lease.generation;
  AppendRequest request;
  request.session = job.id;
  request.epoch = job.epoch;
  request.expected_tail = job.tail;  // nothing came between this import's reads and its append
  request.events = std::move(events);
  request.owner_generation = generation;
  Result<AppendResult> appended = log_.Append(std::move(request));
  Status stored = appended.status();
  if (appended.ok()) {
    job.tail = appended->last_seq;
    Result<SessionInfo> info = log_.GetSession(job.id);
    StatusRecord record =
        info.ok() ? DecodeStatusRecord(info->meta.status_snapshot) : StatusRecord{};
    record.status = StatusAfterImport(job.state);
    stored = log_.UpdateSessionMeta(
        job.id, SessionMetaUpdate{std::nullopt, EncodeStatusRecord(record), generation});
  }
  Release(job.id, generation);
  return stored;
}

void AgentManager::Import(ImportSource source, TranscriptFile file, Callback<ImportReply> done) {
  impl_->Run([source, file = std::move(file), done = std::move(done)](Impl& impl) {
    impl.Import(source, file, done);
  });
}

}  // namespace agentstream::runtime

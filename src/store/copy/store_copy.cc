#include "store/copy/store_copy.h"

#include <memory>
#include <set>

#include "core/name_list.h"
#include "store/copy/copy_conn.h"
#include "store/copy/copy_session.h"
#include "store/copy/copy_tables.h"

namespace agentstream {

namespace {

using store_copy::ColumnKind;
using store_copy::CopyConn;
using store_copy::SessionPlan;

Status CheckVersion(CopyConn& conn, bool source) {
  AS_ASSIGN_OR_RETURN(const std::int64_t version, conn.SchemaVersion());
  const std::int64_t current = conn.CurrentSchemaVersion();
  const std::string side = source ? "the source " : "the destination ";
  if (version > current) {
    return Error(ErrorCode::kUnsupportedVersion,
                 side + conn.name() + " has schema version " + std::to_string(version) +
                     "; this build reads up to " + std::to_string(current) +
                     ": copy it with a newer agentstream");
  }
  if (!source) return Status::Ok();
  if (version == 0) {
    return Error(ErrorCode::kInvalidArgument, conn.name() + " is not an agentstream store");
  }
  if (version < current) {
    return Error(ErrorCode::kInvalidArgument,
                 "the source " + conn.name() + " has schema version " + std::to_string(version) +
                     " (this build's is " + std::to_string(current) +
                     "): start this build's daemon on it once to migrate it, then copy");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> SessionIds(CopyConn& conn) {
  AS_ASSIGN_OR_RETURN(bool has, conn.HasTable("sessions"));
  std::vector<std::string> ids;
  if (!has) return ids;
  AS_ASSIGN_OR_RETURN(
      auto rows, conn.Query("SELECT id FROM sessions ORDER BY id", {}, {ColumnKind::kText}, {}));
  ids.reserve(rows.size());
  for (auto& r : rows) ids.push_back(std::move(r[0].bytes));
  return ids;
}

std::string Named(const std::vector<std::string>& names) {
  return NameList(names, kCopyNamedInError);
}

// Without `merge`, the destination may hold only sessions of the source (an earlier run's).
Status CheckOthers(CopyConn& to, const std::vector<std::string>& source_ids, bool merge) {
  if (merge) return Status::Ok();
  AS_ASSIGN_OR_RETURN(std::vector<std::string> have, SessionIds(to));
  const std::set<std::string> ours(source_ids.begin(), source_ids.end());
  std::vector<std::string> others;
  for (const std::string& id : have)
    if (ours.count(id) == 0) others.push_back(id);
  if (others.empty()) return Status::Ok();
  return Error(ErrorCode::kAlreadyExists,
               to.name() + " holds " + std::to_string(others.size()) +
                   " sessions the source does not (" + Named(others) +
                   "): copy into an empty store, or pass --merge to add the source's to them");
}

class Copier {
 public:
  Copier(CopyConn& from, CopyConn& to, const CopyOptions& options)
      : from_(from), to_(to), options_(options) {}

  Result<CopyReport> Run(const std::vector<std::string>& ids) {
    progress_.sessions_total = static_cast<std::int64_t>(ids.size());
    report_.sessions = progress_.sessions_total;
    AS_ASSIGN_OR_RETURN(std::vector<SessionPlan> plans, Plan(ids));
    if (options_.part != nullptr) AS_RETURN_IF_ERROR(options_.part->Check());
    AS_RETURN_IF_ERROR(CopySessions(plans));
    Phase("tables");
    AS_ASSIGN_OR_RETURN(store_copy::TablesReport tables, store_copy::CopyTables(from_, to_));
    report_.table_rows = tables.rows;
    report_.secrets_left = tables.secrets_left;
    AS_RETURN_IF_ERROR(Verify(ids));
    if (options_.part != nullptr) AS_RETURN_IF_ERROR(options_.part->Copy());
    return report_;
  }

 private:
  void Phase(const char* phase) {
    progress_.phase = phase;
    progress_.sessions_done = 0;
    Report();
  }
  void Report() {
    if (options_.progress) options_.progress(progress_);
  }

  // Compares each session the destination holds with the source's, refusing every one that
  // differs (by name) before anything is written.
  Result<std::vector<SessionPlan>> Plan(const std::vector<std::string>& ids) {
    Phase("check");
    std::vector<SessionPlan> plans;
    std::vector<std::string> conflicts;
    std::string first_reason;
    for (const std::string& id : ids) {
      Result<SessionPlan> plan = store_copy::PlanSession(from_, to_, id);
      if (!plan.ok() && plan.status().code() == ErrorCode::kConflict) {
        if (conflicts.empty()) first_reason = plan.status().message();
        conflicts.push_back(id);
        continue;
      }
      if (!plan.ok()) return plan.status();
      progress_.events_total += plan->events;
      progress_.events_done += plan->copied;
      ++progress_.sessions_done;
      Report();
      plans.push_back(std::move(*plan));
    }
    report_.events = progress_.events_total;
    if (!conflicts.empty()) {
      return Error(ErrorCode::kConflict,
                   std::to_string(conflicts.size()) +
                       " sessions of the source hold other content at the destination (" +
                       Named(conflicts) + "); the first: " + first_reason + ". Nothing was copied");
    }
    return plans;
  }

  Status CopySessions(const std::vector<SessionPlan>& plans) {
    const std::int64_t events_done = progress_.events_done;
    Phase("copy");
    progress_.events_done = events_done;
    for (const SessionPlan& plan : plans) {
      if (!plan.complete) {
        AS_ASSIGN_OR_RETURN(std::int64_t n,
                            store_copy::CopySession(from_, to_, plan, [&](std::int64_t events) {
                              progress_.events_done += events;
                              Report();
                            }));
        report_.events_copied += n;
        ++report_.sessions_copied;
      }
      ++progress_.sessions_done;
      Report();
    }
    return Status::Ok();
  }

  Status Verify(const std::vector<std::string>& ids) {
    Phase("verify");
    for (const std::string& id : ids) {
      AS_ASSIGN_OR_RETURN(store_copy::Digest want, store_copy::DigestSession(from_, id));
      AS_ASSIGN_OR_RETURN(store_copy::Digest have, store_copy::DigestSession(to_, id));
      if (want.sha256 != have.sha256 || want.events != have.events) {
        return Error(ErrorCode::kCorruption,
                     "session " + id + " differs after the copy: " + std::to_string(want.events) +
                         " events, sha256 " + want.sha256 + " in the source; " +
                         std::to_string(have.events) + " events, sha256 " + have.sha256 +
                         " in the copy");
      }
      report_.digests.push_back({id, want.events, want.sha256});
      ++progress_.sessions_done;
      Report();
    }
    return Status::Ok();
  }

  CopyConn& from_;
  CopyConn& to_;
  const CopyOptions& options_;
  CopyProgress progress_;
  CopyReport report_;
};

}  // namespace

Result<CopyReport> CopyStore(const std::string& from_url, const std::string& to_url,
                             const CopyOptions& options) {
  if (from_url == to_url)
    return Error(ErrorCode::kInvalidArgument, "--from and --to name the same store");
  AS_ASSIGN_OR_RETURN(std::unique_ptr<CopyConn> from, store_copy::OpenCopyConn(from_url, false));
  AS_RETURN_IF_ERROR(from->HoldExclusive());
  AS_RETURN_IF_ERROR(CheckVersion(*from, /*source=*/true));
  AS_ASSIGN_OR_RETURN(std::unique_ptr<CopyConn> to, store_copy::OpenCopyConn(to_url, true));
  AS_RETURN_IF_ERROR(to->HoldExclusive());
  AS_RETURN_IF_ERROR(CheckVersion(*to, /*source=*/false));
  AS_RETURN_IF_ERROR(to->EnsureSchema());
  AS_ASSIGN_OR_RETURN(std::vector<std::string> ids, SessionIds(*from));
  AS_RETURN_IF_ERROR(CheckOthers(*to, ids, options.merge));
  Copier copier(*from, *to, options);
  return copier.Run(ids);
}

}  // namespace agentstream

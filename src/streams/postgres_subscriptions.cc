// The subscriptions on PostgreSQL (postgres_streams.h): one row per subscription in
// ds_subscriptions (its state as the JSON record of subscription_state.cc, its pattern and the
// paths it follows, for finding the subscriptions of a changed stream), and the keys in ds_keys.
// A change of one subscription is one transaction under a transaction-level advisory lock on its
// id, so two daemons never change one subscription at once, even one that does not exist yet;
// its time is the database's clock.
#include <sodium.h>

#include <atomic>
#include <chrono>
#include <mutex>

#include "streams/postgres_streams_internal.h"

namespace agentstream::streams {

namespace {

using pg::Conn;
using pg::Param;
using pg::Rows;

class PostgresSubscriptionRecords final : public SubscriptionRecords {
 public:
  PostgresSubscriptionRecords(PostgresStreamsOptions options, Conn conn)
      : options_(std::move(options)), conn_(std::move(conn)) {}

  Result<std::string> OpenKeys() override {
    std::lock_guard lock(mu_);
    AS_RETURN_IF_ERROR(Ready());
    std::string fresh(kSubscriptionSeedBytes + kSubscriptionTokenKeyBytes, '\0');
    randombytes_buf(fresh.data(), fresh.size());
    // The first daemon's keys win; every other daemon reads them.
    Result<Rows> inserted =
        conn_.Exec("INSERT INTO ds_keys(name, value) VALUES($1, $2) ON CONFLICT DO NOTHING",
                   {std::string(kSubscriptionKeysName), Param::Bytes(fresh)});
    sodium_memzero(fresh.data(), fresh.size());
    AS_RETURN_IF_ERROR(inserted.status());
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT value FROM ds_keys WHERE name = $1",
                                           {std::string(kSubscriptionKeysName)}));
    if (r.size() == 0) return Error(ErrorCode::kCorruption, "the subscription keys are missing");
    AS_RETURN_IF_ERROR(RefreshLocked());
    return r.Bytes(0, 0);
  }

  Status Update(const std::string& id, const std::function<void(Slot&)>& fn) override {
    std::lock_guard lock(mu_);
    AS_RETURN_IF_ERROR(Ready());
    Status done = Change(id, fn);
    if (!done.ok()) {
      (void)conn_.ExecScript("ROLLBACK");
      return done;
    }
    return Status::Ok();
  }

  Result<std::vector<Candidate>> Candidates(const std::string& relative_path) override {
    std::lock_guard lock(mu_);
    AS_RETURN_IF_ERROR(Ready());
    if (!pgs::StorableText(relative_path)) return std::vector<Candidate>();
    AS_ASSIGN_OR_RETURN(
        Rows r, conn_.Exec("SELECT id, pattern, paths @> ARRAY[$1]::text[] FROM ds_subscriptions "
                           "WHERE pattern <> '' OR paths @> ARRAY[$1]::text[]",
                           {relative_path}));
    std::vector<Candidate> out;
    out.reserve(static_cast<std::size_t>(r.size()));
    for (int i = 0; i < r.size(); ++i)
      out.push_back(Candidate{r.Text(i, 0), r.Text(i, 1), r.Text(i, 2) == "t"});
    return out;
  }

  bool Any() const override { return any_; }

  void Refresh() override {
    std::lock_guard lock(mu_);
    if (Ready().ok()) (void)RefreshLocked();
  }

 private:
  // Reconnects a broken connection.
  Status Ready() {
    if (!conn_.Broken()) return Status::Ok();
    AS_ASSIGN_OR_RETURN(conn_, pgs::Connect(options_, true));
    return Status::Ok();
  }

  Status RefreshLocked() {
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT EXISTS(SELECT 1 FROM ds_subscriptions)"));
    any_ = r.Text(0, 0) == "t";
    return Status::Ok();
  }

  Status Change(const std::string& id, const std::function<void(Slot&)>& fn) {
    if (!pgs::StorableText(id))
      return Error(ErrorCode::kInvalidArgument, "a subscription id must be UTF-8 text");
    AS_RETURN_IF_ERROR(conn_.ExecScript("BEGIN"));
    AS_RETURN_IF_ERROR(
        conn_.Exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", {"ds_sub:" + id})
            .status());
    AS_ASSIGN_OR_RETURN(Rows r, conn_.Exec("SELECT " + std::string(pgs::kNowMs) +
                                               ", (SELECT record FROM ds_subscriptions WHERE id = "
                                               "$1)",
                                           {id}));
    Slot slot;
    slot.now_ms = r.Int(0, 0);
    std::optional<std::string> before;
    if (!r.IsNull(0, 1)) {
      before = r.Text(0, 1);
      slot.sub = DecodeSubscription(*before);
      if (!slot.sub)
        return Error(ErrorCode::kCorruption, "the stored subscription " + id + " is unreadable");
    }
    Status counted;
    slot.count = [&]() -> std::size_t {
      Result<Rows> n = conn_.Exec("SELECT count(*) FROM ds_subscriptions");
      if (!n.ok()) {
        counted = n.status();
        return static_cast<std::size_t>(-1);
      }
      return static_cast<std::size_t>(n->Int(0, 0));
    };
    fn(slot);
    AS_RETURN_IF_ERROR(counted);
    if (!slot.sub) {
      if (before) {
        AS_RETURN_IF_ERROR(conn_.Exec("DELETE FROM ds_subscriptions WHERE id = $1", {id}).status());
      }
    } else {
      std::string record = EncodeSubscription(*slot.sub);
      if (record != before) {
        if (!pgs::StorableText(record))
          return Error(ErrorCode::kInvalidArgument, "a subscription must be UTF-8 text");
        std::vector<std::string> paths;
        for (const auto& [path, link] : slot.sub->streams) paths.push_back(path);
        AS_RETURN_IF_ERROR(
            conn_
                .Exec("INSERT INTO ds_subscriptions(id, pattern, paths, record) VALUES($1, $2, "
                      "$3::text[], $4) ON CONFLICT (id) DO UPDATE SET pattern = excluded.pattern, "
                      "paths = excluded.paths, record = excluded.record",
                      {id, slot.sub->pattern, pgs::TextArray(paths), record})
                .status());
      }
    }
    AS_RETURN_IF_ERROR(conn_.ExecScript("COMMIT"));
    if (slot.sub) any_ = true;
    if (!slot.sub && before) (void)RefreshLocked();
    return Status::Ok();
  }

  const PostgresStreamsOptions options_;
  std::mutex mu_;  // guards conn_: one change at a time
  Conn conn_;
  std::atomic<bool> any_{false};
};

}  // namespace

Result<std::unique_ptr<SubscriptionRecords>> OpenPostgresSubscriptionRecords(
    const PostgresStreamsOptions& options) {
  AS_ASSIGN_OR_RETURN(Conn conn, pgs::Connect(options, true));
  return std::unique_ptr<SubscriptionRecords>(
      std::make_unique<PostgresSubscriptionRecords>(options, std::move(conn)));
}

}  // namespace agentstream::streams

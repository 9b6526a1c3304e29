// The SQLite side of a streams copy (streams_copy_side.h): the journal of a data directory,
// opened through StreamJournal as a daemon opens it (exclusively: a daemon on it fails to start,
// and the copy fails while one runs) and read whole into memory as a daemon loads it. Writes go
// through the journal's own queue (PutMeta, PutMessage, PutState) and wait for its commit; the
// subscription keys are the key file beside it.
#include <algorithm>
#include <filesystem>
#include <future>
#include <limits>

#include "streams/stream_journal.h"
#include "streams/streams_copy_side.h"
#include "streams/streams_factory.h"
#include "streams/subscription_records.h"
#include "system/wall_clock.h"

namespace agentstream::streams::copy {

namespace {

// The journal's queue bound: a chunk of the copy is queued whole before its commit is awaited.
constexpr std::size_t kJournalQueue = std::numeric_limits<std::size_t>::max();

class JournalSide final : public Side {
 public:
  explicit JournalSide(std::string path) : path_(std::move(path)) {}

  // Opens (creating when `create`) and loads the journal.
  Status Open(bool create) {
    if (!create && !std::filesystem::exists(path_)) return Status::Ok();
    if (create) {
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    }
    AS_ASSIGN_OR_RETURN(journal_, StreamJournal::Open(path_, kJournalQueue));
    AS_ASSIGN_OR_RETURN(std::vector<Stream> loaded, journal_->Load());
    AS_ASSIGN_OR_RETURN(state_, journal_->LoadState());
    streams_.clear();
    next_id_ = journal_->min_next_id();
    for (Stream& s : loaded) {
      next_id_ = std::max(next_id_, s.meta.id + 1);
      streams_.emplace(s.meta.id, std::move(s));
    }
    return Status::Ok();
  }

  const std::string& name() const override { return path_; }
  bool keeps_access_times() const override { return false; }
  Result<std::int64_t> NowMs() override { return system::WallClockMs(); }

  Result<std::vector<StoredStream>> Streams() override {
    std::vector<StoredStream> out;
    out.reserve(streams_.size());
    for (const auto& [id, s] : streams_)
      out.push_back({s.meta, s.tail, static_cast<std::int64_t>(s.messages.size()), std::nullopt});
    return out;
  }

  Result<std::vector<Message>> Messages(std::int64_t id, std::optional<Offset> after,
                                        std::size_t max_messages, std::size_t max_bytes) override {
    std::vector<Message> out;
    auto it = streams_.find(id);
    if (it == streams_.end()) return out;
    const std::vector<Message>& all = it->second.messages;
    auto m = all.begin();
    if (after)
      m = std::upper_bound(all.begin(), all.end(), *after,
                           [](const Offset& o, const Message& msg) { return o < msg.offset; });
    std::size_t bytes = 0;
    for (; m != all.end() && out.size() < max_messages && (out.empty() || bytes < max_bytes); ++m) {
      bytes += m->data->size();
      out.push_back(*m);
    }
    return out;
  }

  Result<std::int64_t> PutStream(const StoredStream& s,
                                 std::optional<std::int64_t> /*source_id*/) override {
    AS_RETURN_IF_ERROR(Writable());
    StreamMeta meta = s.meta;
    if (meta.id == 0) meta.id = next_id_++;
    Stream& stored = streams_[meta.id];
    if (stored.meta.id == 0) stored.tail = meta.forked_from ? meta.fork_offset : Offset{};
    stored.meta = meta;
    journal_->PutMeta(meta);
    return meta.id;
  }

  Status AddMessages(std::int64_t id, const std::vector<Message>& messages) override {
    AS_RETURN_IF_ERROR(Writable());
    Stream& stored = streams_[id];
    for (const Message& m : messages) {
      journal_->PutMessage(id, m);
      stored.messages.push_back(m);
      stored.tail = m.offset;
    }
    return Committed();
  }

  Result<std::map<std::string, std::string>> Subscriptions() override {
    std::map<std::string, std::string> out;
    const std::string prefix(kSubscriptionRecordPrefix);
    for (auto it = state_.lower_bound(prefix);
         it != state_.end() && it->first.rfind(prefix, 0) == 0; ++it)
      out.emplace(it->first.substr(prefix.size()), it->second);
    return out;
  }

  Status PutSubscription(const std::string& id, const std::string& record) override {
    AS_RETURN_IF_ERROR(Writable());
    const std::string key = std::string(kSubscriptionRecordPrefix) + id;
    journal_->PutState(key, record);
    state_[key] = record;
    return Status::Ok();
  }

  Result<std::string> Keys() override { return ReadSubscriptionKeyFile(KeyPath()); }
  Status PutKeys(const std::string& keys) override {
    return WriteSubscriptionKeyFile(KeyPath(), keys);
  }

  Status Sync() override {
    if (!journal_) return Status::Ok();
    AS_RETURN_IF_ERROR(Committed());
    journal_.reset();  // closes the file: what is read next is what it holds
    return Open(false);
  }

 private:
  std::string KeyPath() const { return SubscriptionKeyPath(path_); }

  Status Writable() const {
    if (journal_) return Status::Ok();
    return Error(ErrorCode::kInternal, "the streams journal " + path_ + " is not open to write");
  }

  // Waits for the commit of everything queued so far.
  Status Committed() {
    std::promise<bool> done;
    std::future<bool> ok = done.get_future();
    journal_->AfterCommit([&done](bool committed) { done.set_value(committed); });
    if (ok.get()) return Status::Ok();
    return Error(ErrorCode::kIoError, "writing the streams journal " + path_ + " failed");
  }

  const std::string path_;
  std::unique_ptr<StreamJournal> journal_;  // null: no journal at a source
  std::map<std::int64_t, Stream> streams_;  // by id, as stored
  std::map<std::string, std::string> state_;
  std::int64_t next_id_ = 1;
};

}  // namespace

Result<std::unique_ptr<Side>> OpenJournalSide(const std::string& streams_db, bool create) {
  auto side = std::make_unique<JournalSide>(streams_db);
  AS_RETURN_IF_ERROR(side->Open(create));
  return std::unique_ptr<Side>(std::move(side));
}

}  // namespace agentstream::streams::copy

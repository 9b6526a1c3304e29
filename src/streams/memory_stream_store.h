// MemoryStreamStore: the generic streams of one daemon, every stream held in memory and
// journaled to SQLite (StreamJournal, DATA/streams.db), or in memory only. Thread-safe (one
// mutex). A mutation decides at once and calls `done` before it returns; the change becomes
// durable with the journal's next group commit, and the caller answers the client from
// WhenDurable. Watchers are woken after that commit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "streams/stream_journal.h"
#include "streams/stream_model.h"
#include "streams/stream_store.h"
#include "streams/watchers.h"

namespace agentstream::streams {

class MemoryStreamStore final : public StreamStore {
 public:
  // `journal` null: memory only (tests, the "memory:" store). `clock` defaults to the system's.
  MemoryStreamStore(StreamLimits limits, std::unique_ptr<StreamJournal> journal, Clock clock = {});
  ~MemoryStreamStore() override;
  MemoryStreamStore(const MemoryStreamStore&) = delete;
  MemoryStreamStore& operator=(const MemoryStreamStore&) = delete;

  // Opens the journal at `db_path` and loads every stream.
  static Result<std::unique_ptr<MemoryStreamStore>> Open(const std::string& db_path,
                                                         StreamLimits limits);

  void CreateAsync(CreateArgs args, Done done) override;
  void AppendAsync(AppendArgs args, Done done) override;
  void DeleteAsync(std::string path, Done done) override;
  OpResult Head(const std::string& path, bool touch = false) override;
  ReadResult Read(const std::string& path, std::optional<Offset> after) override;
  std::map<std::string, Offset> Tails(const std::vector<std::string>& paths) override;
  std::vector<std::string> Paths(const std::string& prefix) override;
  void WhenDurable(std::function<void(bool ok)> fn) override;
  std::uint64_t Watch(const std::string& path, std::function<void()> fn) override;
  void Unwatch(const std::string& path, std::uint64_t id) override;
  void SetChangeHook(std::function<void(const std::string&)> hook) override;
  const StreamLimits& limits() const override { return limits_; }

  // Small named records kept beside the streams and journaled with them (the subscriptions):
  // `value` empty deletes `key`. Durable once WhenDurable says so.
  void PutState(const std::string& key, const std::string& value);
  // Every record whose key starts with `prefix`.
  std::map<std::string, std::string> State(const std::string& prefix);

 private:
  OpResult DoCreate(const CreateArgs& args);
  OpResult DoAppend(const AppendArgs& args);
  OpResult DoDelete(const std::string& path);
  Stream* Lookup(const std::string& path, std::int64_t now);
  void Remove(const std::string& path);
  void Persist(const Stream& s);
  void Changed(const std::string& path);
  void Collect(const Stream& s, std::optional<Offset> after, Offset cap, ReadResult* out,
               std::size_t* bytes) const;
  Message AppendData(Stream& s, std::string data);
  std::int64_t Now() const;

  const StreamLimits limits_;
  std::unique_ptr<StreamJournal> journal_;
  Clock clock_;
  std::mutex mu_;  // guards everything below
  std::unordered_map<std::string, Stream> streams_;
  std::size_t total_bytes_ = 0;
  std::int64_t next_id_ = 1;
  std::map<std::string, std::string> state_;
  Watchers watchers_;
};

}  // namespace agentstream::streams

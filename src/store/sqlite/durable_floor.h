// Internal to the store module: keeps reads from showing committed events before they are
// durable. While the writer's commits wait for their sync (WalSyncer), readers could see their
// rows; the floor says, per session with such rows, how far its history is durable, and reads
// clamp their tail to it. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/ids.h"

namespace agentstream::sqlite {

class DurableFloor {
 public:
  // Before commit `batch` becomes visible: `session`'s epoch `epoch` is durable through
  // `durable` (its tail before the batch) until Release(batch) says otherwise.
  void Hold(const std::string& session, Epoch epoch, Seq durable, std::uint64_t batch) {
    std::lock_guard lock(mu_);
    auto [it, fresh] = holds_.try_emplace(session, Entry{epoch, durable, batch});
    if (!fresh) it->second.last_batch = batch;
  }

  // After commit `batch` is durable: `session` is durable through `tail`.
  void Release(const std::string& session, Seq tail, std::uint64_t batch) {
    std::lock_guard lock(mu_);
    auto it = holds_.find(session);
    if (it == holds_.end()) return;
    if (it->second.last_batch <= batch) {
      holds_.erase(it);
    } else {
      it->second.durable = tail;
    }
  }

  // Everything committed so far is durable.
  void Clear() {
    std::lock_guard lock(mu_);
    holds_.clear();
  }

  // The part of [1, tail] of (session, epoch) that readers may see.
  Seq Clamp(const std::string& session, Epoch epoch, Seq tail) const {
    std::lock_guard lock(mu_);
    auto it = holds_.find(session);
    if (it == holds_.end() || it->second.epoch != epoch) return tail;
    return std::min(tail, it->second.durable);
  }

 private:
  struct Entry {
    Epoch epoch;
    Seq durable;
    std::uint64_t last_batch;
  };
  mutable std::mutex mu_;  // guards holds_
  std::unordered_map<std::string, Entry> holds_;
};

}  // namespace agentstream::sqlite
